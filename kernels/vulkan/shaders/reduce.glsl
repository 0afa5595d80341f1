// Sums over one workgroup of REDUCE_SIZE invocations, through shared memory.
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
