# kv_cache_write seed in Triton (naive on purpose): one tile of BX elements of one token's key and
# value rows per program (axis 0: along the row, axis 1: tokens), stored at the row of the token's
# slot; a slot of -1 (a padding token) writes nothing. The data is copied as bits (bf16 loaded and
# stored unchanged). block= is the tile; the threads are num_warps x 32.
# kevo: tune BX 128 64 256 512 1024
# kevo: tune num_warps 4 2 8
# kevo: launch kv_cache_write block=BX,1
import triton
import triton.language as tl


@triton.jit
def kv_cache_write(key, value, key_cache, value_cache, slot_mapping, row, tokens, BX: tl.constexpr):
    t = tl.program_id(1).to(tl.int64)
    n = row.to(tl.int64)
    i = tl.program_id(0).to(tl.int64) * BX + tl.arange(0, BX)
    slot = tl.load(slot_mapping + t).to(tl.int64)
    # The grid is rounded up to whole tiles; a padding token's slot is -1.
    keep = (i < n) & (t < tokens.to(tl.int64)) & (slot >= 0)
    tl.store(key_cache + slot * n + i, tl.load(key + t * n + i, mask=keep), mask=keep)
    tl.store(value_cache + slot * n + i, tl.load(value + t * n + i, mask=keep), mask=keep)
