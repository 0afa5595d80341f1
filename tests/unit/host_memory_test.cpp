#include "engine/host_memory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "engine/error.h"

using engine::HostMemory;

namespace {

bool all_equal(const HostMemory& m, std::byte v) {
  return std::all_of(m.data(), m.data() + m.size(), [&](std::byte b) { return b == v; });
}

}  // namespace

// More than one 2 MiB page and not a multiple of it: zero-filled, page-aligned, writable.
TEST(HostMemory, ZeroFilledAlignedAndWritable) {
  const size_t bytes = (size_t{5} << 20) + 123;
  HostMemory m(bytes);
  ASSERT_NE(m.data(), nullptr);
  EXPECT_EQ(m.size(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 4096, 0u);
  EXPECT_TRUE(all_equal(m, std::byte{0}));
  std::fill(m.data(), m.data() + m.size(), std::byte{0x5A});
  EXPECT_TRUE(all_equal(m, std::byte{0x5A}));
}

TEST(HostMemory, MovesOwnershipAndEmptyIsNull) {
  HostMemory empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);

  HostMemory a(8192);
  a.data()[8191] = std::byte{7};
  std::byte* const p = a.data();
  HostMemory b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.data()[8191], std::byte{7});

  HostMemory c(4096);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 8192u);
  EXPECT_EQ(b.data(), nullptr);
}

TEST(HostMemory, ImpossibleSizeIsAnErrorNamingIt) {
  try {
    HostMemory m(~size_t{0} / 2);
    FAIL() << "a mapping of half the address space succeeded";
  } catch (const engine::Error& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(~size_t{0} / 2)), std::string::npos) << e.what();
  }
}

// The figure the GGUF reader compares a model's data with before reading it into memory.
TEST(HostMemory, AvailableMemoryIsKnownAndPlausible) {
  const size_t available = engine::available_host_memory();
  ASSERT_GT(available, size_t{1} << 20) << "MemAvailable missing from /proc/meminfo";
  EXPECT_LT(available, size_t{1} << 50);
}
