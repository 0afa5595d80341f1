// What every shader shares: the tensors it reads and writes (bindings 0-3: src0, src1, src2,
// dst, and 5: a fourth source, each declared at every element type a shader may read it as)
// and the record of its dispatch (binding 4), selected by the push constant.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

// One dispatch's tensors and op parameters (kernels/vulkan/dispatch.h writes it).
struct Dispatch {
  uvec4 ne[4];    // shapes of src0, src1, src2, dst in elements, fastest dimension first
  uvec4 nb[4];    // their byte strides
  uvec4 offset;   // byte offsets of src1, src2, dst inside their bindings (x unused: src0's is push.src0_offset)
  ivec4 params0;  // the node's op parameters 0-3 (floats bit for bit)
  ivec4 params1;  // and 4-7
  uvec4 extra;    // what the host computed for this dispatch (a row range, a work split)
  uvec4 src3;     // a fourth source (binding 5, attention's mask): byte offset, then nb1..nb3
};

layout(std430, binding = 4) readonly buffer Records { Dispatch records[]; };
// What differs between the dispatches of one record: a weight matrix larger than one binding
// runs as several dispatches, each binding src0 from a chunk of rows (vulkan_storage.cpp).
layout(push_constant) uniform Push {
  uint record;
  uint src0_offset;  // src0's byte offset inside its binding, less first_row rows (mod 2^32)
  uint first_row;    // MUL_MAT and GET_ROWS read src0 rows [first_row, row_end) only
  uint row_end;
} push;
#define D records[push.record]

layout(std430, binding = 0) readonly buffer Src0F32 { float src0_f32[]; };
layout(std430, binding = 0) readonly buffer Src0F16 { float16_t src0_f16[]; };
layout(std430, binding = 0) readonly buffer Src0U16 { uint16_t src0_u16[]; };
layout(std430, binding = 0) readonly buffer Src0U8 { uint8_t src0_u8[]; };
layout(std430, binding = 1) readonly buffer Src1F32 { float src1_f32[]; };
layout(std430, binding = 1) readonly buffer Src1I32 { int src1_i32[]; };
layout(std430, binding = 2) readonly buffer Src2F32 { float src2_f32[]; };
layout(std430, binding = 2) readonly buffer Src2F16 { float16_t src2_f16[]; };
layout(std430, binding = 2) readonly buffer Src2I32 { int src2_i32[]; };
layout(std430, binding = 5) readonly buffer Src3F32 { float src3_f32[]; };
layout(std430, binding = 3) buffer DstF32 { float dst_f32[]; };
layout(std430, binding = 3) buffer DstF16 { float16_t dst_f16[]; };
layout(std430, binding = 3) buffer DstI32 { int dst_i32[]; };

// A dimension index of element `i` of a shape, fastest first.
uvec4 unravel(uint i, uvec4 ne) {
  const uint i0 = i % ne.x;
  i /= ne.x;
  const uint i1 = i % ne.y;
  i /= ne.y;
  return uvec4(i0, i1, i % ne.z, i / ne.z);
}

// Byte position of the element at index `at` of tensor `t` (0-3) in its binding.
uint byte_at(uint t, uvec4 at) {
  return (t == 0 ? push.src0_offset : D.offset[t]) + at.x * D.nb[t].x + at.y * D.nb[t].y + at.z * D.nb[t].z + at.w * D.nb[t].w;
}

// The flat index of this invocation in a 1-D problem dispatched as a grid of up to 65535 x N groups.
uint flat_invocation() { return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x; }
