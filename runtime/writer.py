"""``kafka_format.runtime.writer``, kept for code written before the runtime was split into
subpackages: this name is the module ``kafka_format.runtime.write.writer`` itself."""

import sys

from .write import writer as _module

sys.modules[__name__] = _module
