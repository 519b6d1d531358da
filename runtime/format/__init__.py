"""Layer 1, the record formats: framing, batch headers, CRCs, codecs, sizes, JSON forms."""
