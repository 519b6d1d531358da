# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/offset_index.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class OffsetIndex(KaitaiStruct):
    """The offset index of a log segment (NNNNNNNNNNNNNNNNNNNN.index, named after the segment's
    base offset): a sparse, sorted map from offsets to byte positions in the .log file, as
    8-byte entries. Offsets are stored relative to the segment's base offset (from the file
    name). The active segment's index is preallocated, so it may end in zero-filled entries
    until the segment rolls and the file is trimmed. No checksum.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#log
    
    
    .. seealso::
       OffsetIndex - https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/OffsetIndex.java
    """
    SEQ_FIELDS = ["entries"]
    def __init__(self, _io, _parent=None, _root=None):
        super(OffsetIndex, self).__init__(_io)
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
            _t_entries = OffsetIndex.Entry(self._io, self, self._root)
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
        """One index entry (8 bytes)."""
        SEQ_FIELDS = ["relative_offset", "position"]
        def __init__(self, _io, _parent=None, _root=None):
            super(OffsetIndex.Entry, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self._debug = collections.defaultdict(dict)

        def _read(self):
            self._debug['relative_offset']['start'] = self._io.pos()
            self.relative_offset = self._io.read_s4be()
            self._debug['relative_offset']['end'] = self._io.pos()
            self._debug['position']['start'] = self._io.pos()
            self.position = self._io.read_s4be()
            self._debug['position']['end'] = self._io.pos()


        def _fetch_instances(self):
            pass



