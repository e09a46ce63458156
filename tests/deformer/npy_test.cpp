// .npy / .npz against bytes built by hand from the NumPy format description
// (numpy.lib.format: magic \x93NUMPY, major, minor, little-endian header
// length — uint16 in 1.0, uint32 in 2.0 — then an ASCII Python dict padded with
// spaces and a final '\n' so the data starts 64-byte aligned) and the ZIP
// APPNOTE (local header 0x04034b50, central directory 0x02014b50, end record
// 0x06054b50), and against numpy itself.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "charkit/deformer/npy.h"

using namespace charkit::deformer;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

/// A v1.0 file from a dict text (padded here to 64) and raw data bytes.
std::vector<std::uint8_t> npy_v1(std::string dict, const std::string& data) {
  while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  std::string f = std::string("\x93NUMPY\x01\x00", 8);
  f.push_back(static_cast<char>(dict.size() & 0xFF));
  f.push_back(static_cast<char>(dict.size() >> 8));
  return bytes_of(f + dict + data);
}

std::string error_code(const std::vector<std::uint8_t>& file) {
  auto r = read_npy(file);
  return r.ok() ? "OK" : r.error().code;
}

/// A python3 with numpy, or "" (Debian's /usr/bin/python3 first: a pyenv
/// shim earlier in PATH may lack numpy).
std::string python_with_numpy() {
  for (const char* py : {"/usr/bin/python3", "python3"}) {
    const std::string cmd = std::string(py) + " -c \"import numpy\" >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return py;
  }
  return "";
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int rc = pclose(p);
  if (rc != 0) out += "\n(exit status " + std::to_string(rc) + ")";
  return out;
}

fs::path temp_dir(const char* name) {
  fs::path d = fs::temp_directory_path() /
               ("charkit_npy_test_" + std::string(name) + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Npy, ReadsHandBuiltFloat32) {
  // 1.0f = 00 00 80 3f, -2.0f = 00 00 00 c0, 0.5f = 00 00 00 3f.
  const auto file = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                           std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0\x00\x00\x00\x3f", 12));
  ASSERT_EQ(file.size(), 128U + 12U);  // 10 + 59-byte dict + '\n' > 64: padded to 128
  auto a = read_npy(file);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  EXPECT_EQ(a->dtype, NpyDType::kF4);
  EXPECT_EQ(a->shape, (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(a->to_f32(), (std::vector<float>{1.0F, -2.0F, 0.5F}));
}

TEST(Npy, ReadsOtherDtypesAndVersion2) {
  // int64 2x1: 5 and -1; int32 0-d: 7; uint8 (2,2); bool (2,).
  auto i8 = read_npy(npy_v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }",
                            std::string("\x05\0\0\0\0\0\0\0\xff\xff\xff\xff\xff\xff\xff\xff", 16)));
  ASSERT_TRUE(i8.ok()) << i8.error().to_string();
  EXPECT_EQ(i8->to_i64(), (std::vector<std::int64_t>{5, -1}));
  auto i4 = read_npy(npy_v1("{'descr': '<i4', 'fortran_order': False, 'shape': (), }",
                            std::string("\x07\0\0\0", 4)));
  ASSERT_TRUE(i4.ok());
  EXPECT_TRUE(i4->shape.empty());
  EXPECT_EQ(i4->to_i64(), (std::vector<std::int64_t>{7}));
  auto u1 = read_npy(npy_v1("{\"descr\": \"|u1\", \"fortran_order\": False, \"shape\": (2,2)}",
                            std::string("\x01\x02\x03\xff", 4)));
  ASSERT_TRUE(u1.ok()) << u1.error().to_string();
  EXPECT_EQ(u1->to_f64(), (std::vector<double>{1, 2, 3, 255}));
  auto b1 = read_npy(npy_v1("{'shape': (2,), 'fortran_order': False, 'descr': '|b1'}",
                            std::string("\x01\x00", 2)));
  ASSERT_TRUE(b1.ok()) << b1.error().to_string();
  EXPECT_EQ(b1->to_f32(), (std::vector<float>{1.0F, 0.0F}));
  // Version 2.0: 4-byte header length. 1.5 as <f8 = 00 00 00 00 00 00 f8 3f.
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
  while ((12 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  std::string f = std::string("\x93NUMPY\x02\x00", 8);
  f.push_back(static_cast<char>(dict.size()));
  f.append(std::string("\0\0\0", 3));
  f += dict + std::string("\0\0\0\0\0\0\xf8\x3f", 8);
  auto f8 = read_npy(bytes_of(f));
  ASSERT_TRUE(f8.ok()) << f8.error().to_string();
  EXPECT_EQ(f8->to_f64(), (std::vector<double>{1.5}));
}

TEST(Npy, WritesTheCanonicalHeader) {
  const std::vector<float> v = {1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F};
  auto out = write_npy(NpyArray::from_f32({2, 3}, v));
  ASSERT_TRUE(out.ok());
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  // 10 bytes + the 59-byte dict + '\n' = 70: the data starts at 128.
  ASSERT_EQ(out->size(), 128U + 24U);
  EXPECT_EQ(std::string(out->begin(), out->begin() + 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((*out)[8], 118);  // 128 - 10
  EXPECT_EQ((*out)[9], 0);
  const std::string header(out->begin() + 10, out->begin() + 128);
  EXPECT_EQ(header.substr(0, dict.size()), dict);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.find_first_not_of(' ', dict.size()), header.size() - 1);
  // 2.0f = 00 00 00 40 at data byte 4.
  EXPECT_EQ(std::vector<std::uint8_t>(out->begin() + 132, out->begin() + 136),
            (std::vector<std::uint8_t>{0, 0, 0, 0x40}));
  // 1-d shapes carry the tuple comma; round trip of every dtype.
  auto one = write_npy(NpyArray::from_i32({2}, std::vector<std::int32_t>{-3, 9}));
  ASSERT_TRUE(one.ok());
  EXPECT_NE(std::string(one->begin(), one->end()).find("'shape': (2,), }"), std::string::npos);
  auto back = read_npy(*one);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_i64(), (std::vector<std::int64_t>{-3, 9}));
  const bool flags[] = {true, false, true};
  auto b = read_npy(*write_npy(NpyArray::from_bool({3}, flags)));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->dtype, NpyDType::kB1);
  // A header too long for 1.0 switches to 2.0.
  std::vector<std::uint64_t> shape(30000, 1);  // "1, " x 30000 > 65535 bytes
  auto big = write_npy(NpyArray::from_f32(shape, std::vector<float>{4.0F}));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)[6], 2);
  NpyLimits lim;
  lim.max_dims = 40000;
  lim.max_header_bytes = 1 << 20;
  auto bigback = read_npy(*big, lim);
  ASSERT_TRUE(bigback.ok()) << bigback.error().to_string();
  EXPECT_EQ(bigback->shape.size(), 30000U);
  // Mismatched data is refused.
  NpyArray bad = NpyArray::from_f32({3}, v);
  EXPECT_EQ(write_npy(bad).error().code, "NPY_SIZE");
}

TEST(Npy, RejectsMalformedFiles) {
  const std::string four(4, '\0');
  EXPECT_EQ(error_code(bytes_of("\x93NUMPX\x01\x00")), "NPY_MAGIC");
  EXPECT_EQ(error_code(bytes_of(std::string("\x93NUMPY\x03\x00\x00\x00", 10))), "NPY_VERSION");
  EXPECT_EQ(error_code(bytes_of(std::string("\x93NUMPY\x01\x00\x40\x00{", 11))), "NPY_TRUNCATED");
  const auto hdr = [&](const std::string& d, const std::string& data = std::string(4, '\0')) {
    return error_code(npy_v1(d, data));
  };
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"), "OK");
  EXPECT_EQ(hdr("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }"), "NPY_DTYPE");
  EXPECT_EQ(hdr("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), "NPY_DTYPE");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }"), "NPY_FORTRAN_ORDER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1), }"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (01,), }"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False}"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"),
            "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x"), "NPY_HEADER");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"), "NPY_SIZE");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", std::string(5, '\0')),
            "NPY_SIZE");
  // Product overflow: 2^32 * 2^32 elements, and a single dimension past 2^64.
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
            "NPY_SHAPE");
  EXPECT_EQ(hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (18446744073709551616,), }"),
            "NPY_SHAPE");
  // Large but representable: refused by the limit before any allocation.
  EXPECT_EQ(hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }"),
            "NPY_LIMIT");
  // Header must end with '\n'.
  std::string f = std::string("\x93NUMPY\x01\x00\x02\x00{}", 12);
  EXPECT_EQ(error_code(bytes_of(f)), "NPY_HEADER");
}

TEST(Npz, WritesStoredDeterministicZip) {
  const std::vector<float> x = {1.0F, 2.0F};
  const std::vector<NpzMember> m = {{"x", NpyArray::from_f32({2}, x)},
                                    {"n", NpyArray::from_i64({1}, std::vector<std::int64_t>{3})}};
  auto z = write_npz(m);
  ASSERT_TRUE(z.ok());
  auto z2 = write_npz(m);
  ASSERT_TRUE(z2.ok());
  EXPECT_EQ(*z, *z2);
  const auto& b = *z;
  auto u16 = [&](std::size_t p) { return b[p] | (b[p + 1] << 8); };
  auto u32 = [&](std::size_t p) {
    return static_cast<std::uint32_t>(u16(p)) | (static_cast<std::uint32_t>(u16(p + 2)) << 16);
  };
  EXPECT_EQ(u32(0), 0x04034b50U);
  EXPECT_EQ(u16(8), 0);      // STORED
  EXPECT_EQ(u16(10), 0);     // 00:00:00
  EXPECT_EQ(u16(12), 0x21);  // 1980-01-01
  EXPECT_EQ(u32(18), 136U);  // compressed size = 128-byte header + 8 data bytes
  EXPECT_EQ(u32(22), 136U);
  EXPECT_EQ(u16(26), 5);  // "x.npy"
  EXPECT_EQ(std::string(b.begin() + 30, b.begin() + 35), "x.npy");
  EXPECT_EQ(b[35], 0x93);  // the .npy starts right after the name
  // End record: 2 entries.
  const std::size_t eocd = b.size() - 22;
  EXPECT_EQ(u32(eocd), 0x06054b50U);
  EXPECT_EQ(u16(eocd + 10), 2);
  auto back = read_npz(*z);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  ASSERT_EQ(back->size(), 2U);
  EXPECT_EQ((*back)[0].name, "x");
  EXPECT_EQ((*back)[0].array.to_f32(), x);
  EXPECT_EQ((*back)[1].name, "n");
  EXPECT_EQ((*back)[1].array.to_i64(), (std::vector<std::int64_t>{3}));
  const std::vector<NpzMember> dup = {m[0], m[0]};
  EXPECT_EQ(write_npz(dup).error().code, "NPZ_NAME");
  const std::vector<NpzMember> slash = {{"a/b", m[0].array}};
  EXPECT_EQ(write_npz(slash).error().code, "NPZ_NAME");
}

TEST(Npz, RejectsBrokenArchives) {
  EXPECT_EQ(read_npz(bytes_of("not a zip")).error().code, "NPZ_ZIP");
  const std::vector<NpzMember> m = {{"x", NpyArray::from_f32({1}, std::vector<float>{1.0F})}};
  auto z = write_npz(m);
  ASSERT_TRUE(z.ok());
  auto corrupt = *z;
  corrupt[35 + 128] ^= 0xFF;  // a data byte: the CRC no longer matches
  auto r = read_npz(corrupt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "NPZ_ZIP");
  auto truncated = *z;
  truncated.resize(truncated.size() - 10);
  EXPECT_FALSE(read_npz(truncated).ok());
}

TEST(Npz, NumpyReadsOurFilesAndWeReadNumpys) {
  const std::string py = python_with_numpy();
  if (py.empty()) GTEST_SKIP() << "python3 with numpy not found";
  const fs::path dir = temp_dir("interop");
  // Ours -> numpy.
  const std::vector<float> f = {0.5F, -1.25F, 3.0e-8F, 65504.0F, 1.0F / 3.0F, -0.0F};
  const std::vector<double> d = {1.0 / 3.0, -2.5e300};
  const std::vector<std::int32_t> i4 = {-2147483647 - 1, 2147483647};
  const std::vector<std::int64_t> i8 = {-9007199254740993LL, 42};
  const std::vector<std::uint8_t> u1 = {0, 255, 7};
  const bool b1[] = {true, false};
  const std::vector<NpzMember> m = {{"f", NpyArray::from_f32({2, 3}, f)},
                                    {"d", NpyArray::from_f64({2}, d)},
                                    {"i4", NpyArray::from_i32({2, 1}, i4)},
                                    {"i8", NpyArray::from_i64({2}, i8)},
                                    {"u1", NpyArray::from_u8({3}, u1)},
                                    {"b1", NpyArray::from_bool({2}, b1)},
                                    {"s", NpyArray::from_f32({}, std::vector<float>{9.0F})}};
  auto z = write_npz(m);
  ASSERT_TRUE(z.ok());
  ASSERT_TRUE(write_file_bytes(dir / "ours.npz", *z).ok());
  const std::string check = R"PY(
import sys, numpy as np
z = np.load(sys.argv[1])
assert list(z.keys()) == ['f', 'd', 'i4', 'i8', 'u1', 'b1', 's'], list(z.keys())
f = np.array([0.5, -1.25, 3.0e-8, 65504.0, 1.0/3.0, -0.0], dtype='<f4').reshape(2, 3)
assert z['f'].dtype == np.float32 and z['f'].shape == (2, 3)
assert np.array_equal(z['f'].view('<u4'), f.view('<u4')), z['f']
assert z['d'].dtype == np.float64 and z['d'][0] == 1.0/3.0 and z['d'][1] == -2.5e300
assert z['i4'].dtype == np.int32 and z['i4'].shape == (2, 1) and z['i4'][0, 0] == -2**31 and z['i4'][1, 0] == 2**31 - 1
assert z['i8'].dtype == np.int64 and z['i8'][0] == -9007199254740993 and z['i8'][1] == 42
assert z['u1'].dtype == np.uint8 and list(z['u1']) == [0, 255, 7]
assert z['b1'].dtype == np.bool_ and list(z['b1']) == [True, False]
assert z['s'].shape == () and z['s'] == 9.0
print('numpy-ok')
)PY";
  { std::ofstream(dir / "check.py") << check; }
  const std::string out1 =
      run(py + " " + (dir / "check.py").string() + " " + (dir / "ours.npz").string() + " 2>&1");
  EXPECT_NE(out1.find("numpy-ok"), std::string::npos) << out1;

  // numpy -> ours: np.save (.npy) and savez_compressed (DEFLATED members).
  const std::string make = R"PY(
import sys, numpy as np
a = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5) / 4
np.save(sys.argv[1] + '/a.npy', a)
np.savez_compressed(sys.argv[1] + '/c.npz', w=np.arange(1000, dtype=np.float64) * 0.5, k=np.array([[1, 2], [3, 4]], dtype=np.int64))
np.savez(sys.argv[1] + '/s.npz', u=np.array([True, False, True]))
print('made')
)PY";
  { std::ofstream(dir / "make.py") << make; }
  const std::string out2 =
      run(py + " " + (dir / "make.py").string() + " " + dir.string() + " 2>&1");
  ASSERT_NE(out2.find("made"), std::string::npos) << out2;
  auto a_bytes = read_file_bytes(dir / "a.npy", 1 << 20);
  ASSERT_TRUE(a_bytes.ok());
  auto a = read_npy(*a_bytes);
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_EQ(a->shape, (std::vector<std::uint64_t>{3, 4}));
  const auto av = a->to_f32();
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(av[i], (static_cast<float>(i) - 5.5F) / 4.0F) << i;  // exact in binary
  auto c_bytes = read_file_bytes(dir / "c.npz", 1 << 20);
  ASSERT_TRUE(c_bytes.ok());
  auto c = read_npz(*c_bytes);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  ASSERT_EQ(c->size(), 2U);
  EXPECT_EQ((*c)[0].name, "w");
  const auto w = (*c)[0].array.to_f64();
  ASSERT_EQ(w.size(), 1000U);
  for (std::size_t i = 0; i < w.size(); ++i) ASSERT_EQ(w[i], 0.5 * static_cast<double>(i));
  EXPECT_EQ((*c)[1].name, "k");
  EXPECT_EQ((*c)[1].array.to_i64(), (std::vector<std::int64_t>{1, 2, 3, 4}));
  auto s_bytes = read_file_bytes(dir / "s.npz", 1 << 20);
  ASSERT_TRUE(s_bytes.ok());
  auto s = read_npz(*s_bytes);
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ((*s)[0].array.dtype, NpyDType::kB1);
  EXPECT_EQ((*s)[0].array.to_f32(), (std::vector<float>{1, 0, 1}));
  fs::remove_all(dir);
}
