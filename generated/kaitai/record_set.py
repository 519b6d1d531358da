# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/record_set.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from . import legacy_message
from . import record_batch


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class RecordSet(KaitaiStruct):
    """A Kafka record set: what a `.log` segment file holds, and what a fetch response carries
    for a partition. Entries lie back to back, each framed by an int64 offset and an int32
    length counting the bytes that follow, and each is read according to its magic byte,
    which every format keeps at byte 16 of the entry: 0 and 1 are legacy messages, 2 a v2
    record batch. The formats may be mixed in one set.
    
    Like Kafka's reader, a partial entry at the end (fewer than 12 bytes left, or a length
    running past the end, as a fetch response's size limit or a crash mid-append leaves it)
    is not an error: those bytes are left in `trailing`. Each entry is parsed in a substream
    of exactly its own size, and the peeks at its length and magic use positions relative to
    the entry's start, so the result is the same in every target language and in the Web IDE.
    The same type parses the inner message set of a decompressed legacy wrapper.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#messageformat
    
    
    .. seealso::
       ByteBufferLogInputStream - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/ByteBufferLogInputStream.java
    """
    def __init__(self, _io, _parent=None, _root=None):
        super(RecordSet, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        if self.is_first_complete:
            pass
            self.frames = []
            i = 0
            while True:
                _ = RecordSet.Frame(self._io.pos(), self._io, self, self._root)
                self.frames.append(_)
                if (not (_.is_next_complete)):
                    break
                i += 1

        self.trailing = self._io.read_bytes_full()


    def _fetch_instances(self):
        pass
        if self.is_first_complete:
            pass
            for i in range(len(self.frames)):
                pass
                self.frames[i]._fetch_instances()


        _ = self.first_length
        if hasattr(self, '_m_first_length'):
            pass


    class Frame(KaitaiStruct):
        """One entry (v2 batch or legacy message), dispatched on its magic byte."""
        def __init__(self, ofs_frame, _io, _parent=None, _root=None):
            super(RecordSet.Frame, self).__init__(_io)
            self._parent = _parent
            self._root = _root
            self.ofs_frame = ofs_frame
            self._read()

        def _read(self):
            _on = self.magic
            if _on == 0:
                pass
                self._raw_body = self._io.read_bytes(12 + self.length)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = legacy_message.LegacyMessage(_io__raw_body)
            elif _on == 1:
                pass
                self._raw_body = self._io.read_bytes(12 + self.length)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = legacy_message.LegacyMessage(_io__raw_body)
            elif _on == 2:
                pass
                self._raw_body = self._io.read_bytes(12 + self.length)
                _io__raw_body = KaitaiStream(BytesIO(self._raw_body))
                self.body = record_batch.RecordBatch(_io__raw_body)
            else:
                pass
                self.body = self._io.read_bytes(12 + self.length)
            _ = self.body
            if not self.length >= 14:
                raise kaitaistruct.ValidationExprError(self.body, self._io, u"/types/frame/seq/0")


        def _fetch_instances(self):
            pass
            _on = self.magic
            if _on == 0:
                pass
                self.body._fetch_instances()
            elif _on == 1:
                pass
                self.body._fetch_instances()
            elif _on == 2:
                pass
                self.body._fetch_instances()
            else:
                pass
            _ = self.base_offset
            if hasattr(self, '_m_base_offset'):
                pass

            _ = self.length
            if hasattr(self, '_m_length'):
                pass

            _ = self.magic
            if hasattr(self, '_m_magic'):
                pass

            _ = self.next_length
            if hasattr(self, '_m_next_length'):
                pass


        @property
        def base_offset(self):
            """The entry's offset field (v2 base offset; legacy message offset)."""
            if hasattr(self, '_m_base_offset'):
                return self._m_base_offset

            _pos = self._io.pos()
            self._io.seek(self.ofs_frame)
            self._m_base_offset = self._io.read_s8be()
            self._io.seek(_pos)
            return getattr(self, '_m_base_offset', None)

        @property
        def is_next_complete(self):
            """True when a complete entry follows this one."""
            if hasattr(self, '_m_is_next_complete'):
                return self._m_is_next_complete

            self._m_is_next_complete =  ((self._io.size() - self.ofs_next >= 12) and (self.next_length <= (self._io.size() - self.ofs_next) - 12)) 
            return getattr(self, '_m_is_next_complete', None)

        @property
        def length(self):
            """The entry's length field; the entry is 12 + length bytes long."""
            if hasattr(self, '_m_length'):
                return self._m_length

            _pos = self._io.pos()
            self._io.seek(self.ofs_frame + 8)
            self._m_length = self._io.read_s4be()
            self._io.seek(_pos)
            return getattr(self, '_m_length', None)

        @property
        def magic(self):
            """The entry's magic byte (format version), at byte 16 of every entry."""
            if hasattr(self, '_m_magic'):
                return self._m_magic

            _pos = self._io.pos()
            self._io.seek(self.ofs_frame + 16)
            self._m_magic = self._io.read_s1()
            self._io.seek(_pos)
            return getattr(self, '_m_magic', None)

        @property
        def next_length(self):
            """Length field of the following entry, when at least 12 bytes follow."""
            if hasattr(self, '_m_next_length'):
                return self._m_next_length

            if self._io.size() - self.ofs_next >= 12:
                pass
                _pos = self._io.pos()
                self._io.seek(self.ofs_next + 8)
                self._m_next_length = self._io.read_s4be()
                self._io.seek(_pos)

            return getattr(self, '_m_next_length', None)

        @property
        def ofs_next(self):
            """Position right after this entry."""
            if hasattr(self, '_m_ofs_next'):
                return self._m_ofs_next

            self._m_ofs_next = (self.ofs_frame + 12) + self.length
            return getattr(self, '_m_ofs_next', None)


    @property
    def first_length(self):
        """Length field of the first entry, when at least 12 bytes are present."""
        if hasattr(self, '_m_first_length'):
            return self._m_first_length

        if self._io.size() >= 12:
            pass
            _pos = self._io.pos()
            self._io.seek(8)
            self._m_first_length = self._io.read_s4be()
            self._io.seek(_pos)

        return getattr(self, '_m_first_length', None)

    @property
    def is_first_complete(self):
        """True when the set starts with a complete entry."""
        if hasattr(self, '_m_is_first_complete'):
            return self._m_is_first_complete

        self._m_is_first_complete =  ((self._io.size() >= 12) and (self.first_length <= self._io.size() - 12)) 
        return getattr(self, '_m_is_first_complete', None)


