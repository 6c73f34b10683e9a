// Bad input never crashes and never passes silently: every reader raises input_error naming the
// file and the position (byte offset or JSON path). Files are made in a temporary directory.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <fstream>
#include <string>

#include "gpuforecast/core/error.hpp"
#include "core/warning.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "gpuforecast/data/kernel_tuner_cache.hpp"
#include "gpuforecast/data/community_formats.hpp"
#include "data/temp_dir.hpp"

using namespace gpuforecast;
using Catch::Matchers::Contains;

namespace {

const char* const kHeader = R"({
"device_name": "NVIDIA A100-PCIE-40GB",
"kernel_name": "k",
"problem_size": [
64
],
"tune_params_keys": [
"bx",
"tx"
],
"tune_params": {
"bx": [
16,
32
],
"tx": [
1,
2
]
},
"objective": "time",
"cache": {
)";

std::string entry(const std::string& key, const std::string& bx, const std::string& tx, const std::string& time,
                  const std::string& times) {
  return "\"" + key + "\": {\"bx\": " + bx + ", \"tx\": " + tx + ", \"time\": " + time + ", \"times\": " + times +
         ", \"compile_time\": 10.5, \"verification_time\": 0, \"benchmark_time\": 3.0, \"GFLOP/s\": 100.0, "
         "\"strategy_time\": 0, \"framework_time\": 1.0, \"timestamp\": \"2023-12-22 09:54:05+00:00\"}";
}

std::string good_cache() {
  return std::string(kHeader) + entry("16,1", "16", "1", "1.5", "[1.0, 2.0, 1.5]") + ",\n" +
         entry("16,2", "16", "2", "\"RuntimeFailedConfig\"", "[]") + ",\n" +
         entry("32,1", "32", "1", "2.0", "[2.0, 2.0]") + "}\n}\n";
}

std::string gzip(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

struct Files {
  test::TempDir dir;
  std::string write(const std::string& name, const std::string& bytes) {
    const auto p = (dir.path() / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
};

// Runs `f`, which must throw input_error naming `file` at a position containing `position`.
template <class F>
void expect_input_error(F&& f, const std::string& file, const std::string& position, const std::string& message) {
  try {
    f();
    FAIL("no error raised for " << file);
  } catch (const input_error& e) {
    INFO(e.what());
    CHECK(e.get_file() == file);
    CHECK_THAT(e.get_position(), Contains(position));
    CHECK_THAT(std::string(e.what()), Contains(message));
  }
}

}  // namespace

TEST_CASE("a small valid cache file reads, plain and gzipped") {
  Files f;
  for (const auto& p : {f.write("ok.json", good_cache()), f.write("ok.json.gz", gzip(good_cache())),
                        f.write("gz_without_gz_name.json", gzip(good_cache()))}) {
    const CacheFile c = read_kernel_tuner_cache(p);
    REQUIRE(c.entries.size() == 3);
    CHECK(c.entries[0].measurement.ok());
    CHECK(c.entries[0].measurement.median_ms == 1.5);
    CHECK(c.entries[0].mean_ms == 1.5);
    CHECK(c.entries[0].extra.at("GFLOP/s") == 100.0);
    CHECK(c.entries[1].measurement.status == Status::runtime_failed);
    CHECK(c.entries[1].measurement.reason == "RuntimeFailedConfig");
    CHECK(c.entries[1].measurement.compile_ms == 10.5);
    CHECK(c.entries[2].config.key() == "32,1");
    CHECK(c.problem_size == std::vector<std::int64_t>{64});
  }
}

TEST_CASE("Kernel Tuner's unclosed append-only cache files are repaired") {
  Files f;
  const std::string two = std::string(kHeader) + entry("16,1", "16", "1", "1.5", "[1.5]") + ",\n" +
                          entry("16,2", "16", "2", "2.5", "[2.5]");
  CHECK(read_kernel_tuner_cache(f.write("a.json", two + ",\n")).entries.size() == 2);  // crash after a line
  CHECK(read_kernel_tuner_cache(f.write("b.json", two + "\n")).entries.size() == 2);   // crash before the comma
  CHECK(read_kernel_tuner_cache(f.write("c.json", std::string(kHeader))).entries.empty());  // nothing tuned yet
  // Half an entry line is a write cut short (a killed search appending its cache): the line is
  // dropped with a warning naming the file and line, the complete entries are kept.
  const std::string half = two + ",\n\"32,1\": {\"bx\": 32, \"tx\": 1, \"time\": 1.";
  const CacheFile torn = read_kernel_tuner_cache(f.write("d.json", half));
  CHECK(torn.entries.size() == 2);
  REQUIRE(torn.warnings.size() == 1);
  CHECK_THAT(torn.warnings.front(), Catch::Contains((f.dir.path() / "d.json").string()) && Catch::Contains("line 25"));
  // An entry cut in the middle of a line that is not the last is no torn line: a truncated file.
  const std::string spread = two + ",\n\"32,1\": {\"bx\": 32,\n\"tx\": 1, \"time\": 1.";
  expect_input_error([&] { (void)read_kernel_tuner_cache(f.write("e.json", spread)); }, (f.dir.path() / "e.json").string(),
                     "byte", "truncated");
}

TEST_CASE("truncated and corrupt gzip") {
  Files f;
  const std::string gz = gzip(good_cache());
  const auto p = f.write("t.json.gz", gz.substr(0, gz.size() / 2));
  expect_input_error([&] { (void)read_kernel_tuner_cache(p); }, p, "byte", "truncated gzip");
  std::string bad = gz;
  bad[12] ^= 0x55;
  bad[13] ^= 0x55;
  bad[20] ^= 0x55;
  const auto q = f.write("c.json.gz", bad);
  expect_input_error([&] { (void)read_kernel_tuner_cache(q); }, q, "byte", "gzip");
  // Also through Dataset::load, which names the same file.
  expect_input_error([&] { (void)Dataset::load(std::vector<std::string>{p}); }, p, "byte", "truncated gzip");
}

TEST_CASE("truncated and malformed JSON name the byte and the JSON path") {
  Files f;
  const std::string text = good_cache();
  // Cut in an entry spread over two lines (a cut last line of a one-line entry is a torn write,
  // dropped with a warning: see the unclosed files above).
  std::string spread = text;
  spread.insert(spread.find("\"time\": 1.5"), "\n");
  const auto cut = spread.find("\"times\": [1.0, 2.0") + 12;
  const auto p = f.write("t.json", spread.substr(0, cut));
  expect_input_error([&] { (void)read_kernel_tuner_cache(p); }, p, "cache[\"16,1\"].times[", "truncated");
  const auto q = f.write("m.json", std::string(kHeader) + "\"16,1\": {\"bx\": 16,, }}}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(q); }, q, "byte", "syntax error");
  const auto e = f.write("empty.json", "");
  expect_input_error([&] { (void)read_kernel_tuner_cache(e); }, e, "byte", "");
  const auto l = f.write("list.json", "[1, 2]");
  expect_input_error([&] { (void)read_kernel_tuner_cache(l); }, l, "byte 0", "object");
}

TEST_CASE("missing keys and wrong types") {
  Files f;
  std::string no_cache = good_cache();
  no_cache = no_cache.substr(0, no_cache.find("\"objective\"")) + "\"objective\": \"time\"}\n";
  const auto p = f.write("nocache.json", no_cache);
  expect_input_error([&] { (void)read_kernel_tuner_cache(p); }, p, "", "missing key \"cache\"");

  const auto q = f.write("noparam.json", std::string(kHeader) + "\"16,1\": {\"bx\": 16, \"time\": 1.0}}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(q); }, q, "cache[\"16,1\"]", "missing parameter \"tx\"");

  const auto r = f.write("notime.json", std::string(kHeader) + "\"16,1\": {\"bx\": 16, \"tx\": 1}}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(r); }, r, "cache[\"16,1\"]", "missing key \"time\"");

  const auto s = f.write("status.json", std::string(kHeader) + entry("16,1", "16", "1", "\"Exploded\"", "[]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(s); }, s, "cache[\"16,1\"].time", "Exploded");

  const auto d = f.write("twice.json", "{\"tune_params_keys\": [\"a\", \"a\"], \"cache\": {}}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(d); }, d, "tune_params_keys", "twice");

  const auto t = f.write("keys.json", "{\"tune_params_keys\": 3, \"cache\": {}}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(t); }, t, "tune_params_keys", "expected a list");
}

TEST_CASE("times that are strings, negative or NaN") {
  Files f;
  const auto s = f.write("s.json", std::string(kHeader) + entry("16,1", "16", "1", "1.0", "[1.0, \"fast\"]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(s); }, s, "cache[\"16,1\"].times[1]", "must be a number");
  const auto n = f.write("n.json", std::string(kHeader) + entry("16,1", "16", "1", "1.0", "[1.0, 2.0, -3.0]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(n); }, n, "cache[\"16,1\"].times[2]", "negative");
  const auto m = f.write("m.json", std::string(kHeader) + entry("16,1", "16", "1", "-1.0", "[1.0]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(m); }, m, "cache[\"16,1\"].time", "negative");
  // Python's json writes NaN, which is not JSON: rejected (a runtime must be a finite number),
  // naming the byte and the entry.
  const auto nan = f.write("nan.json", std::string(kHeader) + entry("16,1", "16", "1", "1.0", "[1.0, NaN]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(nan); }, nan, "cache[\"16,1\"].times[1]", "NaN");
  const auto inf = f.write("inf.json", std::string(kHeader) + entry("16,1", "16", "1", "Infinity", "[1.0]") + "}\n}");
  expect_input_error([&] { (void)read_kernel_tuner_cache(inf); }, inf, "cache[\"16,1\"].time", "NaN and Infinity");
}

TEST_CASE("unknown devices load with a warning naming the file and the device") {
  Files f;
  std::vector<std::string> warnings;
  const auto previous = set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  std::string text = good_cache();
  text.replace(text.find("NVIDIA A100-PCIE-40GB"), 21, "Imaginary GPU 9000");
  const auto p = f.write("imaginary.json", text);
  CHECK(read_kernel_tuner_cache(p).device_name == "Imaginary GPU 9000");  // the reader itself does not care
  const SpaceData s = load_space(p);
  CHECK(s.device->name == "Imaginary GPU 9000");
  CHECK_FALSE(s.device->has_numbers());
  CHECK(s.observations.size() == 3);
  REQUIRE(warnings.size() == 1);  // once for the file, not once per entry
  CHECK(s.warnings == warnings);
  CHECK_THAT(warnings[0], Contains(p) && Contains("\"Imaginary GPU 9000\"") && Contains("not in the device table"));
  // No device_name: the file stem is the device.
  warnings.clear();
  text.replace(text.find("Imaginary GPU 9000"), 18, "");
  const auto q = f.write("NoSuchGpu.json", text);
  CHECK(load_space(q).device->name == "NoSuchGpu");
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Contains(q) && Contains("\"NoSuchGpu\"") && Contains("has no device_name"));
  warnings.clear();
  const auto r = f.write("A4000.json", text);
  CHECK(load_space(r).device->name.find("A4000") != std::string::npos);
  CHECK(warnings.empty());
  set_warning_handler(previous);
}

TEST_CASE("parameter names after the cache still resolve") {
  Files f;
  const auto p = f.write("late.json",
                         "{\"cache\": {\"16,1\": {\"bx\": 16, \"tx\": 1, \"time\": 1.0, \"GB/s\": 5}}, "
                         "\"tune_params_keys\": [\"tx\", \"bx\"], \"device_name\": \"A100\"}");
  const CacheFile c = read_kernel_tuner_cache(p);
  REQUIRE(c.entries.size() == 1);
  CHECK(c.entries[0].config.names() == std::vector<std::string>{"tx", "bx"});
  CHECK(c.entries[0].config.key() == "1,16");
  CHECK(c.entries[0].extra.at("GB/s") == 5);
  CHECK(c.space.parameters()[1].values == std::vector<Value>{16});
}

TEST_CASE("missing files and the wrong format") {
  Files f;
  const auto missing = (f.dir.path() / "nope.json.gz").string();
  expect_input_error([&] { (void)read_kernel_tuner_cache(missing); }, missing, "", "cannot open");
  const std::string t4 = R"({"schema_version": "1.0.0", "results": []})";
  const auto p = f.write("x_T4.json", t4);
  expect_input_error([&] { (void)read_kernel_tuner_cache(p); }, p, "", "T4");
  CHECK(read_t4(p).results.empty());
}

TEST_CASE("bad T4 files") {
  Files f;
  const std::string head = R"({"schema_version": "1.0.0", "metadata": {"timeunit": "milliseconds"}, "results": [)";
  const std::string good = R"({"configuration": {"bx": 16}, "times": {"compilation": 1.0, "runtimes": [1.0, 2.0]},
                               "invalidity": "correct", "measurements": [{"name": "time", "value": 1.5, "unit": ""}],
                               "objectives": ["time"]})";
  const auto ok = f.write("ok_T4.json", head + good + "]}");
  CHECK(read_t4(ok).results.at(0).measurement.median_ms == 1.5);
  auto bad = good;
  bad.replace(bad.find("2.0"), 3, "-2.0");
  const auto n = f.write("neg_T4.json", head + good + "," + bad + "]}");
  expect_input_error([&] { (void)read_t4(n); }, n, "results[1].times.runtimes[1]", "negative");
  auto inv = good;
  inv.replace(inv.find("correct"), 7, "weird");
  const auto i = f.write("inv_T4.json", head + inv + "]}");
  expect_input_error([&] { (void)read_t4(i); }, i, "results[0].invalidity", "weird");
  const auto t = f.write("trunc_T4.json", (head + good).substr(0, 120));
  expect_input_error([&] { (void)read_t4(t); }, t, "byte", "truncated");
  const auto m = f.write("nores_T4.json", R"({"schema_version": "1.0.0"})");
  expect_input_error([&] { (void)read_t4(m); }, m, "", "missing key \"results\"");
  const auto c = f.write("nocfg_T4.json", head + R"({"invalidity": "correct"}]})");
  expect_input_error([&] { (void)read_t4(c); }, c, "results[0]", "configuration");
  // Found by the cache-reader fuzzer: a number beyond a double is refused, not a crash.
  auto huge = good;
  huge.replace(huge.find("1.0"), 3, "1e999");
  const auto h = f.write("huge_T4.json", head + huge + "]}");
  expect_input_error([&] { (void)read_t4(h); }, h, "", "overflow");
}

TEST_CASE("bad T1 files name the condition and the column") {
  Files f;
  auto t1 = [](const std::string& values, const std::string& condition) {
    return R"({"General": {"BenchmarkName": "b"}, "ConfigurationSpace": {"TuningParameters": [
      {"Name": "bx", "Type": "int", "Values": ")" + values + R"("}, {"Name": "tx", "Type": "int", "Values": "[1, 2]"}],
      "Conditions": [{"Expression": "bx >= 16", "Parameters": ["bx"]}, {"Expression": ")" + condition + R"(", "Parameters": []}]},
      "KernelSpecification": {"KernelName": "k", "KernelFile": "k.cu", "ProblemSize": [64]}})";
  };
  const auto ok = f.write("ok.json", t1("[16, 32]", "bx * tx <= 64"));
  const T1File t = read_t1(ok);
  CHECK(t.space.constraints().size() == 2);
  CHECK(t.space.is_valid(t.space.make_config({32, 2})));
  CHECK(!t.space.is_valid(t.space.make_config({32, 3})));
  const auto syntax = f.write("syntax.json", t1("[16, 32]", "bx * <= 64"));
  expect_input_error([&] { (void)read_t1(syntax); }, syntax, "ConfigurationSpace.Conditions[1].Expression", "column");
  const auto unknown = f.write("unknown.json", t1("[16, 32]", "bz <= 64"));
  expect_input_error([&] { (void)read_t1(unknown); }, unknown, "ConfigurationSpace.Conditions[1].Expression", "bz");
  const auto values = f.write("values.json", t1("[16, thirty-two]", "bx <= 64"));
  expect_input_error([&] { (void)read_t1(values); }, values, "TuningParameters[0].Values", "thirty-two");
  const auto nolist = f.write("nolist.json", t1("16", "bx <= 64"));
  expect_input_error([&] { (void)read_t1(nolist); }, nolist, "TuningParameters[0].Values", "expected a list");
  const auto trunc = f.write("trunc.json", t1("[16]", "bx").substr(0, 80));
  expect_input_error([&] { (void)read_t1(trunc); }, trunc, "byte", "truncated");
  const auto nospec = f.write("nospec.json", R"({"ConfigurationSpace": {"TuningParameters": []}})");
  expect_input_error([&] { (void)read_t1(nospec); }, nospec, "", "KernelSpecification");
}
