// Sums over one workgroup of REDUCE_SIZE invocations, through shared memory (after vec_math.glsl).
shared float reduce_scratch[REDUCE_SIZE];

float workgroup_sum(float v) {
  reduce_scratch[gl_LocalInvocationID.x] = v;
  barrier();
  for (uint s = REDUCE_SIZE / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationID.x < s) reduce_scratch[gl_LocalInvocationID.x] += reduce_scratch[gl_LocalInvocationID.x + s];
    barrier();
  }
  const float total = reduce_scratch[0];
  barrier();
  return total;
}

// The same for sums carried as pairs (vec_math.glsl's pair_add).
shared vec2 reduce_pairs[REDUCE_SIZE];

vec2 workgroup_pair_sum(vec2 v) {
  reduce_pairs[gl_LocalInvocationID.x] = v;
  barrier();
  for (uint s = REDUCE_SIZE / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationID.x < s)
      reduce_pairs[gl_LocalInvocationID.x] = pair_add(reduce_pairs[gl_LocalInvocationID.x], reduce_pairs[gl_LocalInvocationID.x + s]);
    barrier();
  }
  const vec2 total = reduce_pairs[0];
  barrier();
  return total;
}

float workgroup_max(float v) {
  reduce_scratch[gl_LocalInvocationID.x] = v;
  barrier();
  for (uint s = REDUCE_SIZE / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationID.x < s)
      reduce_scratch[gl_LocalInvocationID.x] = max(reduce_scratch[gl_LocalInvocationID.x], reduce_scratch[gl_LocalInvocationID.x + s]);
    barrier();
  }
  const float top = reduce_scratch[0];
  barrier();
  return top;
}

// The row this workgroup works on, in a grid of up to 65535 x N groups.
uint workgroup_row() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }
