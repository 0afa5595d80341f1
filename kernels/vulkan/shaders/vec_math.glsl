// The CPU backend's arithmetic where its roundings matter (kernels/cpu/vec_math.h): its vector
// exp, and sums carried in two floats where it carries them in a double. Activations rounded to
// f16 or bf16 turn a one-ulp difference into one of 2^-11 or 2^-8, so both backends compute
// these the same way.
#ifndef VEC_MATH_GLSL
#define VEC_MATH_GLSL

// a * b + c rounded once, as the CPU's fused multiply-add, from plain operations: a driver may
// split fma() into a multiply and an add. The product is made exact as p + e (Dekker), then
// p + c + e summed with the error of p + c kept.
vec2 split(float a) {
  precise const float c = 4097.0 * a;
  precise const float hi = c - (c - a);
  precise const float lo = a - hi;
  return vec2(hi, lo);
}
float fused(float a, float b, float c) {
  const vec2 x = split(a), y = split(b);
  precise const float p = a * b;
  precise const float e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
  precise const float s = p + c;
  precise const float back = s - p;
  precise const float t = (p - (s - back)) + (c - back);
  precise const float v = s + (t + e);
  return v;
}

// exp(x) as the CPU's vec_expf: n = round(x / ln 2), a degree-5 polynomial in the remainder, times 2^n.
float vec_expf(float x) {
  if (abs(x) > 140.0) return x < 0.0 ? 0.0 : 1.0 / 0.0;  // |n| > 192, as the CPU's (also for -inf, a masked score)
  precise const float z = fused(x, uintBitsToFloat(0x3FB8AA3Bu), uintBitsToFloat(0x4B400000u));  // x / ln 2 + 1.5 * 2^23
  precise const float n = z - uintBitsToFloat(0x4B400000u);
  const float b = fused(-n, uintBitsToFloat(0x35BFBE8Eu), fused(-n, uintBitsToFloat(0x3F317200u), x));
  precise const float u = b * b;
  const float j = fused(fused(fused(uintBitsToFloat(0x3C072010u), b, uintBitsToFloat(0x3D2B9F17u)), u,
                              fused(uintBitsToFloat(0x3E2AAF33u), b, uintBitsToFloat(0x3EFFFEDBu))),
                        u, fused(uintBitsToFloat(0x3F7FFFF6u), b, 1.0));
  return ldexp(j, int(n));
}

// x / y rounded to nearest: a driver may divide through a reciprocal, one rounding more; the
// exact remainder of that quotient corrects it.
float div_rn(float x, float y) {
  precise const float q = x / y;
  return fused(fused(-q, y, x), 1.0 / y, q);
}

// A sum carried as an unevaluated pair hi + lo (about 48 bits), as near a double sum as f32 allows.
vec2 pair_add(vec2 s, vec2 t) {
  precise const float hi = s.x + t.x;
  precise const float back = hi - s.x;
  precise const float err = (s.x - (hi - back)) + (t.x - back);
  precise const float lo = err + (s.y + t.y);
  precise const float top = hi + lo;
  precise const float rest = lo - (top - hi);
  return vec2(top, rest);
}

// a * b as an exact pair (Dekker's product).
vec2 exact_product(float a, float b) {
  const vec2 x = split(a), y = split(b);
  precise const float p = a * b;
  precise const float e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
  return vec2(p, e);
}

// s * t for pairs, about 2^-44 relative.
vec2 pair_mul(vec2 s, vec2 t) {
  const vec2 p = exact_product(s.x, t.x);
  precise const float lo = p.y + (s.x * t.y + s.y * t.x);
  precise const float hi = p.x + lo;
  precise const float rest = lo - (hi - p.x);
  return vec2(hi, rest);
}

vec2 pair_of(uint hi, uint lo) { return vec2(uintBitsToFloat(hi), uintBitsToFloat(lo)); }

// sin(x) and cos(x) rounded to nearest, as the CPU's sinf and cosf give them: x less a multiple
// of pi/2 (pi/2 in four floats) kept as a pair, then Taylor series in pairs to 2^-44.
void sin_cos(float x, out float sin_x, out float cos_x) {
  const float k = roundEven(x * uintBitsToFloat(0x3F22F983u));  // x * 2/pi
  vec2 r = pair_add(vec2(x, 0.0), -exact_product(k, uintBitsToFloat(0x3FC90FDBu)));
  r = pair_add(r, -exact_product(k, uintBitsToFloat(0xB33BBD2Eu)));
  r = pair_add(r, -exact_product(k, uintBitsToFloat(0xA6F72CEDu)));
  r = pair_add(r, -exact_product(k, uintBitsToFloat(0x194C5170u)));
  const vec2 z = pair_mul(r, r);
  // (-1)^i / (2i + 1)! for i = 7 .. 1 and (-1)^i / (2i)! for i = 8 .. 1, each as a pair
  const uint sin_terms[14] = uint[](0xAB573F9Fu, 0x9E667704u, 0x2F309231u, 0xA2C5792Fu, 0xB2D7322Bu, 0xA5FEA89Cu,
                                    0x3638EF1Du, 0x292AD8E6u, 0xB9500D01u, 0x2C3FCBFDu, 0x3C088889u, 0xAFEEEEEFu,
                                    0xBE2AAAABu, 0x31AAAAABu);
  const uint cos_terms[16] = uint[](0x29573F9Fu, 0x1C667704u, 0xAD49CBA5u, 0xA08C07CAu, 0x310F76C7u, 0x24FF8D89u,
                                    0xB493F27Eu, 0x2808760Au, 0x37D00D01u, 0xAABFCBFDu, 0xBAB60B61u, 0x2E13E93Fu,
                                    0x3D2AAAABu, 0xB0AAAAABu, 0xBF000000u, 0x00000000u);
  vec2 s = pair_of(sin_terms[0], sin_terms[1]);
  for (uint i = 1; i < 7; ++i) s = pair_add(pair_of(sin_terms[2 * i], sin_terms[2 * i + 1]), pair_mul(z, s));
  s = pair_add(r, pair_mul(r, pair_mul(z, s)));
  vec2 c = pair_of(cos_terms[0], cos_terms[1]);
  for (uint i = 1; i < 8; ++i) c = pair_add(pair_of(cos_terms[2 * i], cos_terms[2 * i + 1]), pair_mul(z, c));
  c = pair_add(vec2(1.0, 0.0), pair_mul(z, c));
  const int quadrant = int(k) & 3;
  const float sr = s.x, cr = c.x;  // a pair's hi is its value rounded to f32
  sin_x = quadrant == 0 ? sr : quadrant == 1 ? cr : quadrant == 2 ? -sr : -cr;
  cos_x = quadrant == 0 ? cr : quadrant == 1 ? -sr : quadrant == 2 ? -cr : sr;
}

// float(double(hi + lo) / n), for n below 2^24.
float pair_over(vec2 s, float n) {
  precise const float q = s.x / n;
  const float r = fused(-q, n, s.x);  // exact: the remainder of the first quotient
  precise const float v = q + (r + s.y) / n;
  return v;
}

// A 16-lane vector's sum by halving: lanes i and i + 8, then i + 4, i + 2, i + 1.
float lanes_sum(float v[16]) {
  precise float h[8], q[4];
  for (uint i = 0; i < 8; ++i) h[i] = v[i + 8] + v[i];
  for (uint i = 0; i < 4; ++i) q[i] = h[i + 4] + h[i];
  precise const float s = (q[0] + q[2]) + (q[1] + q[3]);
  return s;
}

// The orders of the CPU's f16 and bf16 dot products, as its dot_order picks them (the host
// passes the code): one activation column, the same over a KV span padded with zeros, a batch.
#define ORDER_ROW 0
#define ORDER_ROW_PADDED 1
#define ORDER_BATCH 2

// Softmax's exps of one 16-element group, x[l] - top for the first n of them (zeros past), and
// what they add to the row's sum as the CPU adds it: a whole group by the lane tree, a row's
// tail element by element.
vec2 exp_group(inout float x[16], uint n, float top) {
  for (uint l = 0; l < 16; ++l) x[l] = l < n ? vec_expf(x[l] - top) : 0.0;
  if (n == 16) return vec2(lanes_sum(x), 0.0);
  vec2 sum = vec2(0.0);
  for (uint l = 0; l < n; ++l) sum = pair_add(sum, vec2(x[l], 0.0));
  return sum;
}

// float(1 / double(hi + lo)).
float pair_reciprocal(vec2 s) {
  precise const float q = 1.0 / s.x;
  precise const float v = q + (fused(-q, s.x, 1.0) - q * s.y) / s.x;
  return v;
}

#endif
