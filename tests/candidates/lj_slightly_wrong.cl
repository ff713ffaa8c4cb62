// lj_slightly_wrong: the drift uses the velocity from before the kick, r' = r + v dt (explicit
// Euler), where the task's symplectic Euler step is v' = v + F dt, r' = r + v' dt.
// kevo: tune BLOCK 128 64 256 512
// kevo: launch lj_step block=BLOCK
#ifndef BLOCK
#define BLOCK 128
#endif

// Cell coordinate of one (unwrapped) position component: wrap into [0, L), then clamp against rounding.
int cell_of(float x, uint m, float L)
{
    const float w = x - L * floor(x / L);
    int c = (int)floor(w * (float)m / L);
    return c < 0 ? 0 : (c >= (int)m ? (int)m - 1 : c);
}

__kernel void lj_clear_cells(__global uint* cell_count, uint m3)
{
    const uint c = (uint)get_global_id(0);
    if (c < m3) cell_count[c] = 0u;
}

__kernel void lj_build_cells(__global const float4* pos, __global uint* cell_count, __global uint* cell_list, uint n, uint m, float L, uint max_per_cell)
{
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;  // the global size is rounded up to whole work-groups
    const float4 p = pos[i];
    const uint c = ((uint)cell_of(p.z, m, L) * m + (uint)cell_of(p.y, m, L)) * m + (uint)cell_of(p.x, m, L);
    const uint slot = atomic_inc(&cell_count[c]);
    if (slot < max_per_cell) cell_list[(size_t)c * max_per_cell + slot] = i;  // past the cap: dropped, but counted
}

__kernel void lj_step(__global const float4* pos_in, __global float4* pos_out, __global const float4* vel_in, __global float4* vel_out, __global const uint* cell_count, __global const uint* cell_list, uint n, uint m, float L, float rcut2, float dt, uint max_per_cell)
{
    const uint i = (uint)get_global_id(0);
    if (i >= n) return;
    const float4 p = pos_in[i];
    const int cx = cell_of(p.x, m, L), cy = cell_of(p.y, m, L), cz = cell_of(p.z, m, L);
    const int mi = (int)m;
    float fx = 0.0f, fy = 0.0f, fz = 0.0f;
    for (int oz = -1; oz <= 1; ++oz)
        for (int oy = -1; oy <= 1; ++oy)
            for (int ox = -1; ox <= 1; ++ox) {
                const uint c = (uint)((((cz + oz + mi) % mi) * mi + (cy + oy + mi) % mi) * mi + (cx + ox + mi) % mi);
                const uint count = min(cell_count[c], max_per_cell);
                for (uint s = 0; s < count; ++s) {
                    const float4 q = pos_in[cell_list[(size_t)c * max_per_cell + s]];
                    float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
                    dx -= L * rint(dx / L);  // minimum image
                    dy -= L * rint(dy / L);
                    dz -= L * rint(dz / L);
                    const float r2 = dx * dx + dy * dy + dz * dz;
                    if (r2 >= rcut2 || r2 <= 1e-12f) continue;  // also skips i itself
                    const float inv2 = 1.0f / r2, inv6 = inv2 * inv2 * inv2;
                    const float f = -24.0f * (2.0f * inv6 * inv6 - inv6) * inv2;
                    fx += f * dx;
                    fy += f * dy;
                    fz += f * dz;
                }
            }
    float4 v = vel_in[i];
    const float4 v_old = v;
    v.x += fx * dt;
    v.y += fy * dt;
    v.z += fz * dt;
    vel_out[i] = v;
    pos_out[i] = (float4)(p.x + v_old.x * dt, p.y + v_old.y * dt, p.z + v_old.z * dt, p.w);  // WRONG: old v
}
