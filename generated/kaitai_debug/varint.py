# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/varint.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class Varint(KaitaiStruct):
    """A signed integer as Kafka writes it inside v2 records: zigzag-encoded, then written as
    base-128 groups, least significant group first, the high bit of each byte set when another
    byte follows (the protobuf encoding). Kafka uses the same wire form for int32 "varint"
    fields (at most 5 bytes) and int64 "varlong" fields (at most 10 bytes); this one type
    reads both and accepts up to 10 bytes. A 10th byte with its continuation bit set is an
    error (Kafka's "varlong is too long"); of the 10th byte only bit 0 counts, as in Java,
    where the other bits are shifted out of the 64-bit value.
    
    The decoding multiplies each group by its place value instead of shifting, so that it is
    exact in Python for the whole int64 range and meaningful in JavaScript, where `<<`, `>>`
    and `^` work on 32 bits. JavaScript numbers are doubles, though: in the Web IDE and any
    JavaScript build, `raw` and `value` are exact only up to 2^53 in magnitude (timestamps,
    deltas and lengths fit; arbitrary 64-bit values may not). The sign is taken from the
    lowest bit of the first byte, so it is right even where the magnitude is rounded.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#record
    
    
    .. seealso::
       ByteUtils.readVarint / readVarlong - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/utils/ByteUtils.java
    """
    SEQ_FIELDS = ["groups"]
    def __init__(self, _io, _parent=None, _root=None):
        super(Varint, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['groups']['start'] = self._io.pos()
        self._debug['groups']['arr'] = []
        self.groups = []
        i = 0
        while True:
            self._debug['groups']['arr'].append({'start': self._io.pos()})
            _ = self._io.read_u1()
            self.groups.append(_)
            self._debug['groups']['arr'][len(self.groups) - 1]['end'] = self._io.pos()
            _ = self.groups[i]
            if not  ((_ & 128 == 0) or (i < 9)) :
                raise kaitaistruct.ValidationExprError(self.groups[i], self._io, u"/seq/0")
            if _ & 128 == 0:
                break
            i += 1
        self._debug['groups']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass
        for i in range(len(self.groups)):
            pass


    @property
    def is_negative(self):
        """The zigzag sign bit (lowest bit of raw); exact in every language."""
        if hasattr(self, '_m_is_negative'):
            return self._m_is_negative

        self._m_is_negative = self.groups[0] & 1 == 1
        return getattr(self, '_m_is_negative', None)

    @property
    def raw(self):
        """The unsigned 64-bit number the groups encode, before zigzag decoding
        (0 <= raw < 2^64). Exact in Python; a double in JavaScript (exact up to 2^53).
        """
        if hasattr(self, '_m_raw'):
            return self._m_raw

        self._m_raw = self.raw_half * 2 + (self.groups[0] & 1)
        return getattr(self, '_m_raw', None)

    @property
    def raw_half(self):
        """`raw` without its lowest bit (raw >>> 1): the magnitude part of the zigzag code,
        summed group by group so that JavaScript keeps it exact up to 2^53.
        """
        if hasattr(self, '_m_raw_half'):
            return self._m_raw_half

        self._m_raw_half = ((self.groups[0] & 127) >> 1) + ((self.groups[1] & 127) * 64 + ((self.groups[2] & 127) * 8192 + ((self.groups[3] & 127) * 1048576 + ((self.groups[4] & 127) * 134217728 + ((self.groups[5] & 127) * 17179869184 + ((self.groups[6] & 127) * 2199023255552 + ((self.groups[7] & 127) * 281474976710656 + ((self.groups[8] & 127) * 36028797018963968 + ((self.groups[9] & 1) * 4611686018427387904 if len(self.groups) > 9 else 0) if len(self.groups) > 8 else 0) if len(self.groups) > 7 else 0) if len(self.groups) > 6 else 0) if len(self.groups) > 5 else 0) if len(self.groups) > 4 else 0) if len(self.groups) > 3 else 0) if len(self.groups) > 2 else 0) if len(self.groups) > 1 else 0)
        return getattr(self, '_m_raw_half', None)

    @property
    def value(self):
        """The signed value: zigzag-decoded `raw`, i.e. `(raw >>> 1) ^ -(raw & 1)`
        (0 -> 0, 1 -> -1, 2 -> 1, 3 -> -2, ...). Exact in Python over the whole int64 range;
        in JavaScript exact while |value| <= 2^53, and of the right sign always.
        """
        if hasattr(self, '_m_value'):
            return self._m_value

        self._m_value = (-(self.raw_half) - 1 if self.groups[0] & 1 == 1 else self.raw_half)
        return getattr(self, '_m_value', None)


