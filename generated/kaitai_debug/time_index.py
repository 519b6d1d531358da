# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/time_index.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class TimeIndex(KaitaiStruct):
    """The time index of a log segment (NNNNNNNNNNNNNNNNNNNN.timeindex): a sparse map from
    timestamps to offsets, as 12-byte entries with non-decreasing timestamps. Offsets are
    stored relative to the segment's base offset (from the file name). The active segment's
    index is preallocated, so it may end in zero-filled entries until it is trimmed. No
    checksum.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#log
    
    
    .. seealso::
       TimeIndex - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/TimeIndex.java
    """
    SEQ_FIELDS = ["entries"]
    def __init__(self, _io, _parent=None, _root=None):
        super(TimeIndex, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['entries']['start'] = self._io.pos()
        self._debug['entries']['arr'] = []
        self.entries = []
        i = 0
        while not self._io.is_eof():
            self._debug['entries']['arr'].append({'start': self._io.pos()})
            _t_entries = TimeIndex.Entry(self._io, self, self._root)
            try:
                _t_entries._read()
            finally:
                self.entries.append(_t_entries)
            self._debug['entries']['arr'][len(self.entries) - 1]['end'] = self._io.pos()
            i += 1

        self._debug['entries']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass
        for i in range(len(self.entries)):
            pass
            self.entries[i]._fetch_instances()


    class Entry(KaitaiStruct):
        """One index entry (12 bytes)."""
        SEQ_FIELDS = ["timestamp", "relative_offset"]
        def __init__(self, _io, _parent=None, _root=None):
            super(TimeIndex.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['timestamp']['start'] = self._io.pos()
            self.timestamp = self._io.read_s8be()
            self._debug['timestamp']['end'] = self._io.pos()
            self._debug['relative_offset']['start'] = self._io.pos()
            self.relative_offset = self._io.read_s4be()
            self._debug['relative_offset']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass



