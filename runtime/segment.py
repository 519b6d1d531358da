"""``kafka_format.runtime.segment``, kept for code written before the runtime was split into
subpackages: this name is the module ``kafka_format.runtime.log.partition`` itself."""

import sys

from .log import partition as _module

sys.modules[__name__] = _module
