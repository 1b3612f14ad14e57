"""Instances: trace readers and writers, seeded generators and the papers' worked examples.

Readers and writers
    :func:`read_instance` / :func:`write_instance` (format detected from the content or the
    suffix), and per format: the public coflow-benchmark format (:func:`read_benchmark`),
    Sincronia's flow format (:func:`read_sincronia`) and coflowlab's JSON (:func:`read_json`).
    Malformed files raise :class:`coflowlab.TraceFormatError` with path, line and field.
Generators
    :func:`uniform`, :func:`fb_like`, :func:`concurrent_open_shop`, :func:`single_port`,
    :func:`assign_weights`, :func:`assign_deadlines`; all seeded with NumPy generators.
Worked examples
    :mod:`coflowlab.instances.examples`: named instances with their expected values.
"""

from . import examples as examples
from .benchmark import COFLOWSIM_CAPACITY as COFLOWSIM_CAPACITY
from .benchmark import FB_TRACE_NAME as FB_TRACE_NAME
from .benchmark import find_data_file as find_data_file
from .benchmark import find_fb_trace as find_fb_trace
from .benchmark import format_benchmark as format_benchmark
from .benchmark import parse_benchmark as parse_benchmark
from .benchmark import read_benchmark as read_benchmark
from .benchmark import write_benchmark as write_benchmark
from .examples import EXAMPLES as EXAMPLES
from .examples import EXPECTED as EXPECTED
from .generators import FB_BIN_FRACTIONS as FB_BIN_FRACTIONS
from .generators import SeedLike as SeedLike
from .generators import assign_deadlines as assign_deadlines
from .generators import assign_weights as assign_weights
from .generators import concurrent_open_shop as concurrent_open_shop
from .generators import fb_like as fb_like
from .generators import poisson_releases as poisson_releases
from .generators import single_port as single_port
from .generators import spread_flow_starts as spread_flow_starts
from .generators import uniform as uniform
from .io import FORMATS as FORMATS
from .io import atomic_write_text as atomic_write_text
from .io import detect_format as detect_format
from .io import read_instance as read_instance
from .io import read_json as read_json
from .io import write_instance as write_instance
from .io import write_json as write_json
from .sincronia import SINCRONIA_CAPACITY as SINCRONIA_CAPACITY
from .sincronia import format_sincronia as format_sincronia
from .sincronia import parse_sincronia as parse_sincronia
from .sincronia import read_sincronia as read_sincronia
from .sincronia import write_sincronia as write_sincronia
