"""Chunks with their offsets, the encoder, embedding models by name, the stamped on-disk store and the shipped index that seeds it."""
