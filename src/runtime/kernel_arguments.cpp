#include "runtime/kernel_arguments.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>

#include "gpuforecast/core/error.hpp"
#include "runtime/launch_geometry.hpp"

namespace gpuforecast {

namespace {
std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Round-to-nearest-even float -> IEEE half bits (normals, subnormals, inf, NaN).
std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::int32_t exp = static_cast<std::int32_t>((x >> 23) & 0xff) - 127 + 15;
  std::uint32_t mant = x & 0x7fffffu;
  if (((x >> 23) & 0xff) == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0));
  if (exp >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (exp <= 0) {
    if (exp < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - exp;
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0) {
    if (mant == 0) return std::bit_cast<float>(sign);
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

void store(ElementType t, std::byte* p, double v) {
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  switch (t) {
    case ElementType::f16: put(float_to_half(static_cast<float>(v))); break;
    case ElementType::f32: put(static_cast<float>(v)); break;
    case ElementType::f64: put(v); break;
    case ElementType::i8: put(static_cast<std::int8_t>(v)); break;
    case ElementType::u8: put(static_cast<std::uint8_t>(v)); break;
    case ElementType::i16: put(static_cast<std::int16_t>(v)); break;
    case ElementType::u16: put(static_cast<std::uint16_t>(v)); break;
    case ElementType::i32: put(static_cast<std::int32_t>(v)); break;
    case ElementType::u32: put(static_cast<std::uint32_t>(v)); break;
    case ElementType::i64: put(static_cast<std::int64_t>(v)); break;
    case ElementType::u64: put(static_cast<std::uint64_t>(v)); break;
  }
}

double load(ElementType t, const std::byte* p) {
  auto get = [p](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (t) {
    case ElementType::f16: return half_to_float(get(std::uint16_t{}));
    case ElementType::f32: return get(float{});
    case ElementType::f64: return get(double{});
    case ElementType::i8: return get(std::int8_t{});
    case ElementType::u8: return get(std::uint8_t{});
    case ElementType::i16: return get(std::int16_t{});
    case ElementType::u16: return get(std::uint16_t{});
    case ElementType::i32: return get(std::int32_t{});
    case ElementType::u32: return get(std::uint32_t{});
    case ElementType::i64: return static_cast<double>(get(std::int64_t{}));
    case ElementType::u64: return static_cast<double>(get(std::uint64_t{}));
  }
  return 0;
}

bool is_integer(ElementType t) { return t != ElementType::f16 && t != ElementType::f32 && t != ElementType::f64; }

// splitmix64: a stream per (seed, argument) that is the same on every machine.
std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

ElementType parse_element_type(const std::string& type) {
  const std::string t = lower(type);
  if (t == "float" || t == "float32" || t == "f32") return ElementType::f32;
  if (t == "double" || t == "float64" || t == "f64") return ElementType::f64;
  if (t == "half" || t == "float16" || t == "__half" || t == "f16") return ElementType::f16;
  if (t == "int" || t == "int32" || t == "int32_t" || t == "i32") return ElementType::i32;
  if (t == "uint" || t == "uint32" || t == "uint32_t" || t == "unsigned int" || t == "unsigned") return ElementType::u32;
  if (t == "int64" || t == "int64_t" || t == "long" || t == "long long") return ElementType::i64;
  if (t == "uint64" || t == "uint64_t" || t == "unsigned long" || t == "size_t") return ElementType::u64;
  if (t == "int16" || t == "short" || t == "int16_t") return ElementType::i16;
  if (t == "uint16" || t == "unsigned short" || t == "uint16_t") return ElementType::u16;
  if (t == "char" || t == "int8" || t == "int8_t" || t == "signed char") return ElementType::i8;
  if (t == "uchar" || t == "uint8" || t == "uint8_t" || t == "unsigned char" || t == "bool") return ElementType::u8;
  throw invalid_argument_error(fmt::format("unsupported argument type \"{}\"", type));
}

std::size_t element_size(ElementType t) noexcept {
  switch (t) {
    case ElementType::i8: case ElementType::u8: return 1;
    case ElementType::f16: case ElementType::i16: case ElementType::u16: return 2;
    case ElementType::f32: case ElementType::i32: case ElementType::u32: return 4;
    case ElementType::f64: case ElementType::i64: case ElementType::u64: return 8;
  }
  return 4;
}

std::vector<HostArgument> make_host_arguments(const KernelSpec& spec, const Config& config,
                                              std::span<const std::int64_t> problem_size, std::uint64_t seed) {
  if (problem_size.empty()) problem_size = spec.problem_size;
  std::vector<HostArgument> out;
  out.reserve(spec.arguments.size());
  for (std::size_t i = 0; i < spec.arguments.size(); ++i) {
    const KernelArgument& a = spec.arguments[i];
    auto fail = [&](const std::string& why) {
      return invalid_argument_error(fmt::format("{}: argument {} (\"{}\"): {}", spec.benchmark_name, i, a.name, why));
    };
    HostArgument h;
    h.name = a.name;
    try {
      h.type = parse_element_type(a.type);
    } catch (const invalid_argument_error& e) {
      throw fail(e.what());
    }
    const std::string memory = lower(a.memory_type);
    h.scalar = memory == "scalar";
    if (!h.scalar && memory != "vector" && !memory.empty()) throw fail("MemoryType must be Vector or Scalar");
    h.constant = lower(a.mem_type) == "constant";
    h.output = a.output;
    if (!h.scalar) {
      const double n = evaluate_spec_expression(a.size.empty() ? "1" : a.size, config, problem_size);
      if (!(n >= 1) || n != std::floor(n) || n > 1e12) throw fail(fmt::format("Size evaluates to {}", n));
      h.count = static_cast<std::size_t>(n);
    }
    const std::size_t es = element_size(h.type);
    h.data.resize(h.count * es);
    const std::string fill = lower(a.fill_type);
    if (h.scalar || fill == "constant" || fill.empty()) {
      for (std::size_t k = 0; k < h.count; ++k) store(h.type, h.data.data() + k * es, a.fill_value);
    } else if (fill == "random") {
      std::uint64_t state = seed ^ (0xa0761d6478bd642full * (i + 1));
      const double scale = a.fill_value != 0 ? a.fill_value : 1.0;
      for (std::size_t k = 0; k < h.count; ++k) {
        const double u = static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53;
        const double v = is_integer(h.type) ? std::floor(u * scale) : u * scale;
        store(h.type, h.data.data() + k * es, v);
      }
    } else {
      throw fail(fmt::format("FillType \"{}\" is not supported (Constant, Random)", a.fill_type));
    }
    out.push_back(std::move(h));
  }
  return out;
}

VerificationResult verify_output(const HostArgument& reference, std::span<const std::byte> actual, double atol,
                                 double rtol) {
  VerificationResult r;
  if (actual.size() != reference.data.size()) {
    r.ok = false;
    r.mismatches = 1;
    r.message = fmt::format("{}: {} bytes, reference {} bytes", reference.name, actual.size(), reference.data.size());
    return r;
  }
  const std::size_t es = element_size(reference.type);
  for (std::size_t k = 0; k < reference.count; ++k) {
    const double ref = load(reference.type, reference.data.data() + k * es);
    const double got = load(reference.type, actual.data() + k * es);
    bool good;
    if (std::isnan(ref)) {
      good = std::isnan(got);
    } else {
      const double err = std::abs(got - ref);
      good = err <= atol + rtol * std::abs(ref);  // false for NaN got
      if (std::isfinite(err)) r.max_abs_error = std::max(r.max_abs_error, err);
    }
    if (!good) {
      if (r.mismatches == 0) r.message = fmt::format("{}[{}] = {}, reference {}", reference.name, k, got, ref);
      ++r.mismatches;
      r.ok = false;
    }
  }
  if (!r.ok) r.message = fmt::format("{} of {} elements differ; first: {}", r.mismatches, reference.count, r.message);
  return r;
}

}  // namespace gpuforecast
