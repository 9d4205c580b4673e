"""hedge_stream: the former name of hedge.stream (python/hedge/stream.py), kept so that
`import hedge_stream as hs` goes on working: this module is that one (the same functions, the
same objects). The hedge package must be importable beside it: python/ on PYTHONPATH, or the
package installed (pip install ./python, make install)."""

import sys

from hedge import stream as _stream

sys.modules[__name__] = _stream
