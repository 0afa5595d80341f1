// Element i of a weight row that starts at byte `row` of src0, as f32, for the weight dtype
// the variant was compiled for (WEIGHT_F32 ... WEIGHT_Q6_K). Quantized rows are blocks laid
// out as GGUF stores them (engine/src/quant_formats.h); BLOCK_ELEMS elements per block.

// weight_group(row, g, w) is elements WEIGHT_GROUP * g onwards of the row, equal to weight_at's, from
// 32-bit loads only (narrower ones cost a lane-by-lane gather on SIMD-over-invocations devices).

layout(std430, binding = 0) readonly buffer Src0U32 { uint src0_u32[]; };

float f16_at(uint byte) { return float(src0_f16[byte / 2]); }
uint u8_at(uint byte) { return uint(src0_u8[byte]); }

// The n (<= 9) little-endian words of src0 from even byte a on, from n + 1 aligned loads, none past the word of byte end - 1.
void words(uint a, uint n, uint end, out uint x[9]) {
  const uint base = a / 4, last = (end - 1) / 4;
  const bool odd = (a & 2u) != 0u;
  uint lo = src0_u32[base];
  for (uint j = 0; j < n; ++j) {
    const uint hi = src0_u32[min(base + j + 1, last)];
    x[j] = odd ? (lo >> 16) | (hi << 16) : lo;
    lo = hi;
  }
}

// The 16 bits at even byte a of src0 (in the low half), from one aligned load.
uint u16_word(uint a) { return src0_u32[a / 4] >> (8 * (a & 2u)); }

// The f16 at even byte a of src0, as f32.
float f16_word(uint a) { return unpackHalf2x16(u16_word(a)).x; }

// Byte i (< 12) of the three words v.
uint byte12(uvec3 v, uint i) { return (v[i / 4] >> (8 * (i % 4))) & 255u; }

#if defined(WEIGHT_Q4_K) || defined(WEIGHT_Q5_K)
// Six-bit scale (x) and min (y) of 32-element sub-block sb in the 12-byte field at `scales` (get_scale_min_k4).
uvec2 scale_min_k4(uint scales, uint sb) {
  if (sb < 4) return uvec2(u8_at(scales + sb) & 63u, u8_at(scales + sb + 4) & 63u);
  const uint b = u8_at(scales + sb + 4);
  return uvec2((b & 15u) | ((u8_at(scales + sb - 4) >> 6) << 4), (b >> 4) | ((u8_at(scales + sb) >> 6) << 4));
}

// The same from the field's three words v.
uvec2 scale_min_k4(uvec3 v, uint sb) {
  if (sb < 4) return uvec2(byte12(v, sb) & 63u, byte12(v, sb + 4) & 63u);
  const uint b = byte12(v, sb + 4);
  return uvec2((b & 15u) | ((byte12(v, sb - 4) >> 6) << 4), (b >> 4) | ((byte12(v, sb) >> 6) << 4));
}
#endif

#if defined(WEIGHT_F32)
#define BLOCK_ELEMS 1
float weight_at(uint row, uint i) { return src0_f32[(row + 4 * i) / 4]; }
#define WEIGHT_GROUP 8
void weight_group(uint row, uint g, out float w[8]) {
  for (uint e = 0; e < 8; ++e) w[e] = src0_f32[row / 4 + 8 * g + e];
}

#elif defined(WEIGHT_F16)
#define BLOCK_ELEMS 1
float weight_at(uint row, uint i) { return f16_at(row + 2 * i); }
#define WEIGHT_GROUP 16
void weight_group(uint row, uint g, out float w[16]) {
  uint x[9];
  words(row + 32 * g, 8, row + 32 * g + 32, x);
  for (uint e = 0; e < 8; ++e) {
    const vec2 h = unpackHalf2x16(x[e]);
    w[2 * e] = h.x;
    w[2 * e + 1] = h.y;
  }
}

#elif defined(WEIGHT_BF16)
#define BLOCK_ELEMS 1
float weight_at(uint row, uint i) { return uintBitsToFloat(uint(src0_u16[(row + 2 * i) / 2]) << 16); }
#define WEIGHT_GROUP 16
void weight_group(uint row, uint g, out float w[16]) {
  uint x[9];
  words(row + 32 * g, 8, row + 32 * g + 32, x);
  for (uint e = 0; e < 8; ++e) {
    w[2 * e] = uintBitsToFloat(x[e] << 16);
    w[2 * e + 1] = uintBitsToFloat(x[e] & 0xFFFF0000u);
  }
}

#elif defined(WEIGHT_Q4_0)
#define BLOCK_ELEMS 32
// {f16 d; u8 qs[16]}: element j is d * (nibble - 8), low nibbles first.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 32) * 18, j = i % 32;
  const uint q = (u8_at(block + 2 + j % 16) >> (4 * (j / 16))) & 15u;
  return f16_at(block) * (float(q) - 8.0);
}
#define WEIGHT_GROUP 32
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + g * 18;
  uint x[9];
  words(block, 5, block + 18, x);
  const float d = unpackHalf2x16(x[0]).x;
  for (uint j = 0; j < 16; ++j) {
    const uint q = x[(j + 2) / 4] >> (8 * ((j + 2) % 4));
    w[j] = d * (float(q & 15u) - 8.0);
    w[j + 16] = d * (float((q >> 4) & 15u) - 8.0);
  }
}

#elif defined(WEIGHT_Q4_1)
#define BLOCK_ELEMS 32
// {f16 d, m; u8 qs[16]}: element j is nibble * d + m, low nibbles first.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 32) * 20, j = i % 32;
  const uint q = (u8_at(block + 4 + j % 16) >> (4 * (j / 16))) & 15u;
  return float(q) * f16_at(block) + f16_at(block + 2);
}
#define WEIGHT_GROUP 32
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + g * 20;
  uint x[9];
  words(block, 5, block + 20, x);
  const vec2 dm = unpackHalf2x16(x[0]);
  for (uint j = 0; j < 16; ++j) {
    const uint q = x[1 + j / 4] >> (8 * (j % 4));
    w[j] = float(q & 15u) * dm.x + dm.y;
    w[j + 16] = float((q >> 4) & 15u) * dm.x + dm.y;
  }
}

#elif defined(WEIGHT_Q5_0)
#define BLOCK_ELEMS 32
// {f16 d; u8 qh[4]; u8 qs[16]}: element j is d * ((bit j of qh << 4 | nibble) - 16), low nibbles first.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 32) * 22, j = i % 32;
  const uint lo = (u8_at(block + 6 + j % 16) >> (4 * (j / 16))) & 15u;
  const uint hi = (u8_at(block + 2 + j / 8) >> (j % 8)) & 1u;
  return (float(lo | (hi << 4)) - 16.0) * f16_at(block);
}
#define WEIGHT_GROUP 32
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + g * 22;
  uint x[9];
  words(block, 6, block + 22, x);
  const float d = unpackHalf2x16(x[0]).x;
  const uint qh = (x[0] >> 16) | (x[1] << 16);
  for (uint j = 0; j < 16; ++j) {
    const uint q = x[(j + 6) / 4] >> (8 * ((j + 6) % 4));
    w[j] = (float((q & 15u) | (((qh >> j) & 1u) << 4)) - 16.0) * d;
    w[j + 16] = (float(((q >> 4) & 15u) | (((qh >> (j + 16)) & 1u) << 4)) - 16.0) * d;
  }
}

#elif defined(WEIGHT_Q5_1)
#define BLOCK_ELEMS 32
// {f16 d, m; u8 qh[4]; u8 qs[16]}: element j is (bit j of qh << 4 | nibble) * d + m, low nibbles first.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 32) * 24, j = i % 32;
  const uint lo = (u8_at(block + 8 + j % 16) >> (4 * (j / 16))) & 15u;
  const uint hi = (u8_at(block + 4 + j / 8) >> (j % 8)) & 1u;
  return float(lo | (hi << 4)) * f16_at(block) + f16_at(block + 2);
}
#define WEIGHT_GROUP 32
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + g * 24;
  uint x[9];
  words(block, 6, block + 24, x);
  const vec2 dm = unpackHalf2x16(x[0]);
  for (uint j = 0; j < 16; ++j) {
    const uint q = x[2 + j / 4] >> (8 * (j % 4));
    w[j] = float((q & 15u) | (((x[1] >> j) & 1u) << 4)) * dm.x + dm.y;
    w[j + 16] = float(((q >> 4) & 15u) | (((x[1] >> (j + 16)) & 1u) << 4)) * dm.x + dm.y;
  }
}

#elif defined(WEIGHT_Q8_0)
#define BLOCK_ELEMS 32
// {f16 d; i8 qs[32]}
float weight_at(uint row, uint i) {
  const uint block = row + (i / 32) * 34;
  return f16_at(block) * float(int8_t(src0_u8[block + 2 + i % 32]));
}
#define WEIGHT_GROUP 32
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + g * 34;
  uint x[9];
  words(block, 9, block + 34, x);
  const float d = unpackHalf2x16(x[0]).x;
  for (uint j = 0; j < 32; ++j) w[j] = d * float(bitfieldExtract(int(x[(j + 2) / 4]), int(8 * ((j + 2) % 4)), 8));
}

#elif defined(WEIGHT_Q2_K)
#define BLOCK_ELEMS 256
// {u8 scales[16] (scale | min << 4); u8 qs[64]; f16 d, dmin}: element 128n + 32k + l is bits 2k of qs[32n + l].
float weight_at(uint row, uint i) {
  const uint block = row + (i / 256) * 84, j = i % 256;
  const uint sc = u8_at(block + j / 16);
  const uint q = (u8_at(block + 16 + 32 * (j / 128) + j % 32) >> (2 * ((j / 32) % 4))) & 3u;
  return f16_at(block + 80) * float(sc & 15u) * float(q) - f16_at(block + 82) * float(sc >> 4);
}
#define WEIGHT_GROUP 32
// Group g is 32-element run g % 8 of block g / 8: qs[32 (run / 4) + l] >> 2 (run % 4), scales 2 run and 2 run + 1.
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + (g / 8) * 84, run = g % 8;
  uint q[9], dm[9];
  words(block + 16 + 32 * (run / 4), 8, block + 84, q);
  words(block + 80, 1, block + 84, dm);
  const uint sc = u16_word(block + 2 * run);
  const vec2 d = unpackHalf2x16(dm[0]);
  for (uint h = 0; h < 2; ++h) {
    const uint s = sc >> (8 * h);
    const float dl = d.x * float(s & 15u), ml = d.y * float((s >> 4) & 15u);
    for (uint l = 0; l < 16; ++l) {
      const uint b = 16 * h + l;
      w[b] = dl * float((q[b / 4] >> (8 * (b % 4) + 2 * (run % 4))) & 3u) - ml;
    }
  }
}

#elif defined(WEIGHT_Q3_K)
#define BLOCK_ELEMS 256
// {u8 hmask[32]; u8 qs[64]; u8 scales[12] (six-bit, biased by 32); f16 d}: Q2_K's 2 bits | bit j / 32 of hmask[j % 32] << 2, -4.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 256) * 110, j = i % 256, g = j / 16;
  const uint lo = (u8_at(block + 32 + 32 * (j / 128) + j % 32) >> (2 * ((j / 32) % 4))) & 3u;
  const uint hi = (u8_at(block + j % 32) >> (j / 32)) & 1u;
  const uint sc_lo = (u8_at(block + 96 + g % 8) >> (4 * (g / 8))) & 15u;
  const uint sc_hi = (u8_at(block + 104 + g % 4) >> (2 * (g / 4))) & 3u;
  return f16_at(block + 108) * float(int(sc_lo | (sc_hi << 4)) - 32) * float(int(lo | (hi << 2)) - 4);
}
#define WEIGHT_GROUP 32
// Group g is 32-element run g % 8 of block g / 8: bit run of hmask[l], qs[32 (run / 4) + l] >> 2 (run % 4).
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + (g / 8) * 110, run = g % 8;
  uint hm[9], q[9];
  words(block, 8, block + 110, hm);
  words(block + 32 + 32 * (run / 4), 8, block + 110, q);
  const uint lo4 = u16_word(block + 96 + (2 * run) % 8) >> (4 * (run / 4));
  const uint hi2 = u16_word(block + 104 + (2 * run) % 4) >> (2 * (run / 2));
  const float d = f16_word(block + 108);
  for (uint h = 0; h < 2; ++h) {
    const uint sc = ((lo4 >> (8 * h)) & 15u) | (((hi2 >> (8 * h)) & 3u) << 4);
    const float dl = d * float(int(sc) - 32);
    for (uint l = 0; l < 16; ++l) {
      const uint b = 16 * h + l, sh = 8 * (b % 4);
      const uint v = ((q[b / 4] >> (sh + 2 * (run % 4))) & 3u) | (((hm[b / 4] >> (sh + run)) & 1u) << 2);
      w[b] = dl * float(int(v) - 4);
    }
  }
}

#elif defined(WEIGHT_Q4_K)
#define BLOCK_ELEMS 256
// {f16 d, dmin; u8 scales[12]; u8 qs[128]}: element 64k + l is the low nibble of qs[32k + l], 64k + 32 + l the high.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 256) * 144, j = i % 256;
  const uvec2 sm = scale_min_k4(block + 4, j / 32);
  const uint q = (u8_at(block + 16 + 32 * (j / 64) + j % 32) >> (4 * ((j / 32) % 2))) & 15u;
  return f16_at(block) * float(sm.x) * float(q) - f16_at(block + 2) * float(sm.y);
}
#define WEIGHT_GROUP 32
// Group g is sub-block g % 8 of block g / 8: nibble g % 2 of qs[32 (sb / 2) + l].
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + (g / 8) * 144, sb = g % 8;
  uint h[9], q[9];
  words(block, 4, block + 144, h);
  words(block + 16 + 32 * (sb / 2), 8, block + 144, q);
  const uvec2 sm = scale_min_k4(uvec3(h[1], h[2], h[3]), sb);
  const vec2 d = unpackHalf2x16(h[0]);
  const float dl = d.x * float(sm.x), ml = d.y * float(sm.y);
  for (uint l = 0; l < 32; ++l) w[l] = dl * float((q[l / 4] >> (8 * (l % 4) + 4 * (sb % 2))) & 15u) - ml;
}

#elif defined(WEIGHT_Q5_K)
#define BLOCK_ELEMS 256
// {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]}: Q4_K's nibble | bit j / 32 of qh[j % 32] << 4.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 256) * 176, j = i % 256;
  const uvec2 sm = scale_min_k4(block + 4, j / 32);
  const uint lo = (u8_at(block + 48 + 32 * (j / 64) + j % 32) >> (4 * ((j / 32) % 2))) & 15u;
  const uint hi = (u8_at(block + 16 + j % 32) >> (j / 32)) & 1u;
  return f16_at(block) * float(sm.x) * float(lo | (hi << 4)) - f16_at(block + 2) * float(sm.y);
}
#define WEIGHT_GROUP 32
// Group g is sub-block g % 8 of block g / 8: Q4_K's nibble | bit sb of qh[l] << 4.
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + (g / 8) * 176, sb = g % 8;
  uint h[9], qh[9], q[9];
  words(block, 4, block + 176, h);
  words(block + 16, 8, block + 176, qh);
  words(block + 48 + 32 * (sb / 2), 8, block + 176, q);
  const uvec2 sm = scale_min_k4(uvec3(h[1], h[2], h[3]), sb);
  const vec2 d = unpackHalf2x16(h[0]);
  const float dl = d.x * float(sm.x), ml = d.y * float(sm.y);
  for (uint l = 0; l < 32; ++l) {
    const uint sh = 8 * (l % 4);
    w[l] = dl * float(((q[l / 4] >> (sh + 4 * (sb % 2))) & 15u) | (((qh[l / 4] >> (sh + sb)) & 1u) << 4)) - ml;
  }
}

#elif defined(WEIGHT_Q6_K)
#define BLOCK_ELEMS 256
// {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d}: element 128n+32k+l is (nibble k/2 of ql[64n+32(k%2)+l] | bits 2k of qh[32n+l] << 4) - 32.
float weight_at(uint row, uint i) {
  const uint block = row + (i / 256) * 210, j = i % 256, n = j / 128, k = (j / 32) % 4, l = j % 32;
  const uint lo = (u8_at(block + 64 * n + 32 * (k % 2) + l) >> (4 * (k / 2))) & 15u;
  const uint hi = (u8_at(block + 128 + 32 * n + l) >> (2 * k)) & 3u;
  const int sc = int(int8_t(src0_u8[block + 192 + j / 16]));
  return f16_at(block + 208) * float(sc) * float(int(lo | (hi << 4)) - 32);
}
#define WEIGHT_GROUP 32
// Group g is run k = g % 4 of half n = (g / 4) % 2 of block g / 8: ql[64n + 32(k % 2) + l] >> 4(k / 2), qh[32n + l] >> 2k.
void weight_group(uint row, uint g, out float w[32]) {
  const uint block = row + (g / 8) * 210, n = (g / 4) % 2, k = g % 4;
  uint ql[9], qh[9];
  words(block + 64 * n + 32 * (k % 2), 8, block + 210, ql);
  words(block + 128 + 32 * n, 8, block + 210, qh);
  const uint sc = u16_word(block + 192 + 2 * (g % 8));
  const float d = f16_word(block + 208);
  for (uint h = 0; h < 2; ++h) {
    const float dl = d * float(bitfieldExtract(int(sc), int(8 * h), 8));
    for (uint l = 0; l < 16; ++l) {
      const uint b = 16 * h + l, sh = 8 * (b % 4);
      const uint v = ((ql[b / 4] >> (sh + 4 * (k / 2))) & 15u) | (((qh[b / 4] >> (sh + 2 * k)) & 3u) << 4);
      w[b] = dl * float(int(v) - 32);
    }
  }
}

#else
#error "no weight dtype defined"
#endif
