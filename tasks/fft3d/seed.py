# fft3d seed in Triton (naive on purpose): radix-2 FFT of whole lines in global memory, as the CUDA
# seed. A program covers a tile of BLOCK elements of the n^3 domain: BLOCK / n whole lines when
# n <= BLOCK, else one line (program p takes line p, and programs past the last line do nothing).
# It writes the bit-reversed lines into `out`, then runs every butterfly stage in place in `out`,
# with a barrier between stages (a program reads back only what it wrote itself). Twiddles come
# from libdevice's sinpi/cospi. float2 buffers are interleaved floats (re, im). block= is the
# tile; the threads are num_warps x 32.
# kevo: tune BLOCK 256 64 128 512 1024
# kevo: tune num_warps 4 2 8
# kevo: launch fft3d_x block=BLOCK
# kevo: launch fft3d_y block=BLOCK
# kevo: launch fft3d_z block=BLOCK
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


# The index of the first element of each `line` along AXIS: lines along x are rows (z, y), along y
# columns (z, x), along z pillars (y, x).
@triton.jit
def line_start(line, nn, n64, AXIS: tl.constexpr):
    if AXIS == 0:
        first = line.to(tl.int64) * n64
    elif AXIS == 1:
        first = (line // nn).to(tl.int64) * n64 * n64 + (line % nn)
    else:
        first = line.to(tl.int64)
    return first


# One forward transform along AXIS (0: x, stride 1; 1: y, stride n; 2: z, stride n*n) of the lines
# this program owns. n and BLOCK are powers of two.
@triton.jit
def fft_lines(src, dst, n, AXIS: tl.constexpr, BLOCK: tl.constexpr):
    nn = n.to(tl.int32)
    n64 = n.to(tl.int64)
    lines = nn * nn
    lines_per_program = tl.maximum(BLOCK // nn, 1)
    first_line = tl.program_id(0) * lines_per_program
    if first_line < lines:  # else the whole program is past the last line
        bits = 0
        while (1 << bits) < nn:
            bits += 1
        elements = lines_per_program * nn  # max(n, BLOCK)
        if AXIS == 0:
            stride = 1
        elif AXIS == 1:
            stride = n64
        else:
            stride = n64 * n64

        # Bit-reversed copy of every owned line from src into dst.
        for start in range(0, elements, BLOCK):
            t = start + tl.arange(0, BLOCK)
            line = first_line + t // nn
            e = t % nn
            active = line < lines
            first = line_start(line, nn, n64, AXIS)
            r = tl.zeros_like(e)
            v = e
            for bit in range(0, bits):
                r = (r << 1) | (v & 1)
                v = v >> 1
            to = 2 * (first + e.to(tl.int64) * stride)
            frm = 2 * (first + r.to(tl.int64) * stride)
            tl.store(dst + to, tl.load(src + frm, mask=active), mask=active)
            tl.store(dst + to + 1, tl.load(src + frm + 1, mask=active), mask=active)
        tl.debug_barrier()

        # Butterfly stages in place in dst: half span 1, 2, 4, ..., n / 2.
        half = nn // 2
        for s in range(0, bits):
            hspan = 1 << s
            for start in range(0, elements // 2, BLOCK // 2):
                u = start + tl.arange(0, BLOCK // 2)
                line = first_line + u // half
                b = u % half
                active = line < lines
                first = line_start(line, nn, n64, AXIS)
                pos = b & (hspan - 1)
                i0 = ((b - pos) << 1) + pos
                p0 = 2 * (first + i0.to(tl.int64) * stride)
                p1 = 2 * (first + (i0 + hspan).to(tl.int64) * stride)
                x = -pos.to(tl.float32) / hspan  # exp(-2 pi i pos / (2 hspan))
                c = libdevice.cospi(x)
                sn = libdevice.sinpi(x)
                ur = tl.load(dst + p0, mask=active)
                ui = tl.load(dst + p0 + 1, mask=active)
                vr = tl.load(dst + p1, mask=active)
                vi = tl.load(dst + p1 + 1, mask=active)
                tr = vr * c - vi * sn
                ti = vr * sn + vi * c
                tl.store(dst + p0, ur + tr, mask=active)
                tl.store(dst + p0 + 1, ui + ti, mask=active)
                tl.store(dst + p1, ur - tr, mask=active)
                tl.store(dst + p1 + 1, ui - ti, mask=active)
            tl.debug_barrier()


@triton.jit
def fft3d_x(inp, out, n, BLOCK: tl.constexpr):
    fft_lines(inp, out, n, 0, BLOCK)


@triton.jit
def fft3d_y(inp, out, n, BLOCK: tl.constexpr):
    fft_lines(inp, out, n, 1, BLOCK)


@triton.jit
def fft3d_z(inp, out, n, BLOCK: tl.constexpr):
    fft_lines(inp, out, n, 2, BLOCK)
