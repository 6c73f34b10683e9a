#include "gpuforecast/core/device.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "gpuforecast/core/error.hpp"

using namespace gpuforecast;

namespace {

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuforecast_device_test";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST_CASE("every device name used in the shared datasets resolves", "[device]") {
  // device_name fields of the cache files, and the file stems used when device_name is empty.
  const std::vector<std::pair<std::string, std::string>> names = {
      {"NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"},
      {"NVIDIA RTX A4000", "RTX A4000"},
      {"NVIDIA RTX A6000", "RTX A6000"},
      {"MI250X", "MI250X"},
      {"AMD Radeon PRO W6600", "Radeon PRO W6600"},
      {"AMD Radeon PRO W7800", "Radeon PRO W7800"},
      {"NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti"},
      {"NVIDIA GeForce RTX 3060 Laptop GPU", "RTX 3060 Laptop GPU"},
      {"NVIDIA GeForce RTX 3090", "RTX 3090"},
      {"NVIDIA TITAN RTX", "TITAN RTX"},
      {"RTX_3090", "RTX 3090"},
      {"RTX_2080_Ti", "RTX 2080 Ti"},
      {"RTX_3060_laptop", "RTX 3060 Laptop GPU"},
      {"RTX_Titan", "TITAN RTX"},
      {"A100", "A100-PCIE-40GB"},
      {"A4000", "RTX A4000"},
      {"A6000", "RTX A6000"},
      {"W6600", "Radeon PRO W6600"},
      {"W7800", "Radeon PRO W7800"},
      {"nvidia a100 pcie 40gb", "A100-PCIE-40GB"},
      {"Tesla T4", "T4"},
      {"AMD Instinct MI300X", "MI300X"},
  };
  for (const auto& [query, canonical] : names) {
    INFO(query);
    const auto d = find_device(query);
    REQUIRE(d);
    CHECK(d->name == canonical);
  }
}

TEST_CASE("the built-in table covers the required GPUs with sane numbers", "[device]") {
  const DeviceRegistry reg;
  for (const char* n : {"H100", "H200", "B200", "L40S", "L4", "A10G", "T4", "V100", "P100", "K20", "GTX 1080 Ti",
                        "GTX Titan X", "RTX 2070 Super", "RTX 4090", "MI50", "MI100", "MI300X"}) {
    INFO(n);
    CHECK(reg.try_find(n) != nullptr);
  }
  CHECK(reg.all().size() >= 25);
  for (const auto& d : reg.all()) {
    INFO(d->name);
    CHECK((d->vendor == "NVIDIA" || d->vendor == "AMD"));
    CHECK(d->sm_count > 0);
    CHECK(d->core_clock_mhz > 500);
    CHECK(d->memory_bandwidth_gbs > 100);
    CHECK(d->memory_gib >= 4);
    CHECK(d->l2_cache_mib > 0);
    CHECK(d->shared_memory_per_sm_kib >= 48);
    CHECK(d->registers_per_sm >= 65536);
    CHECK(d->peak_fp32_tflops > 1);
    CHECK(d->numeric_features().size() == Device::numeric_feature_names().size());
    // Peak FP32 is within 10% of units x clock x 2 FLOP x lanes per unit (64 or 128 on NVIDIA,
    // 64 or 128 with dual issue on AMD): catches a digit typed wrong in the table.
    if (d->vendor == "NVIDIA" && d->architecture != "kepler") {
      const int cc = d->compute_capability_major * 10 + d->compute_capability_minor;
      const double lanes = (cc == 60 || cc == 70 || cc == 75 || cc == 80) ? 64 : 128;
      const double derived = d->sm_count * lanes * 2 * d->core_clock_mhz * 1e-6;
      CHECK(d->peak_fp32_tflops == Approx(derived).epsilon(0.1));
    }
  }
  const auto a100 = reg.find("A100");
  CHECK(a100->sm_arch() == "sm_80");
  CHECK(a100->sm_count == 108);
  CHECK(a100->memory_bandwidth_gbs == 1555);
  CHECK(reg.find("H100")->sm_arch() == "sm_90");
  CHECK(reg.find("B200")->sm_arch() == "sm_100");
  CHECK(reg.find("MI250X")->sm_arch().empty());
  CHECK(reg.find("MI250X")->warp_size == 64);
  CHECK(reg.find("W7800")->warp_size == 32);
}

TEST_CASE("an unknown device lists close names", "[device]") {
  const DeviceRegistry reg;
  CHECK(reg.try_find("RTX 3070") == nullptr);
  try {
    (void)reg.find("RTX 3070");
    FAIL("no error");
  } catch (const unknown_device_error& e) {
    CHECK(e.get_name() == "RTX 3070");
    REQUIRE(!e.get_close_names().empty());
    CHECK(e.get_close_names().size() <= 5);
    const auto& close = e.get_close_names();
    CHECK(std::find(close.begin(), close.end(), "RTX 3080") != close.end());
    CHECK(std::string(e.what()).find("RTX 3080") != std::string::npos);
  }
  try {
    (void)reg.find("NVIDIA A100-PCIE-40G");
    FAIL("no error");
  } catch (const unknown_device_error& e) {
    CHECK(e.get_close_names().front() == "A100-PCIE-40GB");
  }
  CHECK_THROWS_AS(reg.find(""), unknown_device_error);
  CHECK_THROWS_AS(reg.find("NVIDIA"), unknown_device_error);
}

TEST_CASE("devices added from JSON are found and bad JSON names the file and entry", "[device]") {
  DeviceRegistry reg;
  const auto good = write_temp("good.json", R"({"devices": [
    {"name": "Lab GPU 1", "vendor": "NVIDIA", "architecture": "ampere", "compute_capability_major": 8,
     "compute_capability_minor": 6, "sm_count": 10, "core_clock_mhz": 1500, "memory_bandwidth_gbs": 200,
     "memory_gib": 4, "aliases": ["labgpu-one"]},
    {"name": "T4", "vendor": "NVIDIA", "sm_count": 41}
  ]})");
  const std::size_t before = reg.all().size();
  reg.add_from_json(good.string());
  CHECK(reg.all().size() == before + 1);  // T4 replaced, not duplicated
  CHECK(reg.find("lab_gpu_1")->sm_count == 10);
  CHECK(reg.find("LABGPU ONE")->sm_arch() == "sm_86");
  CHECK(reg.find("Tesla T4")->sm_count == 41);

  auto expect_error = [&](const std::string& name, const std::string& text, const std::string& position) {
    const auto p = write_temp(name, text);
    try {
      reg.add_from_json(p.string());
      FAIL("no error for " << name);
    } catch (const input_error& e) {
      INFO(e.what());
      CHECK(e.get_file() == p.string());
      CHECK(e.get_position() == position);
      CHECK(std::string(e.what()).find(p.string()) != std::string::npos);
    }
  };
  expect_error("truncated.json", R"({"devices": [{"name": "x")", "byte 26");
  expect_error("nodevices.json", R"({"gpus": []})", "/devices");
  expect_error("noname.json", R"({"devices": [{"name": "ok", "vendor": "AMD"}, {"vendor": "AMD"}]})", "/devices/1");
  expect_error("badtype.json", R"({"devices": [{"name": "x", "vendor": "AMD", "sm_count": "many"}]})",
               "/devices/0/sm_count");
  expect_error("negative.json", R"({"devices": [{"name": "x", "vendor": "AMD", "memory_gib": -1}]})",
               "/devices/0/memory_gib");
  expect_error("typo.json", R"({"devices": [{"name": "x", "vendor": "AMD", "sm_cont": 3}]})", "/devices/0/sm_cont");
  expect_error("vendor.json", R"({"devices": [{"name": "x", "vendor": "ACME"}]})", "/devices/0/vendor");
  // A failed file adds nothing, not even its good entries.
  CHECK(reg.try_find("ok") == nullptr);
  CHECK_THROWS_AS(reg.add_from_json("/nonexistent/devices.json"), input_error);
}

TEST_CASE("add replaces by name", "[device]") {
  DeviceRegistry reg;
  Device d;
  d.name = "my gpu";
  d.vendor = "AMD";
  d.sm_count = 3;
  reg.add(d);
  d.sm_count = 4;
  d.name = "MY-GPU";
  reg.add(d);
  CHECK(reg.find("My_Gpu")->sm_count == 4);
  Device empty;
  empty.name = "NVIDIA";
  CHECK_THROWS_AS(reg.add(empty), invalid_argument_error);
}

TEST_CASE("names from public Kernel Tuner caches match after vendor, form factor and memory words", "[device]") {
  const DeviceRegistry reg;
  const std::vector<std::pair<std::string, std::string>> names = {
      {"Tesla V100-PCIE-32GB", "V100-PCIE-32GB"},
      {"Tesla V100-PCIE-16GB", "V100-PCIE-16GB"},
      {"Tesla V100-SXM2-16GB", "V100-SXM2-16GB"},
      {"Tesla V100-SXM2-32GB", "V100-SXM2-32GB"},
      {"Tesla P100-PCIE-12GB", "P100-PCIE-12GB"},
      {"Tesla P100-PCIE-16GB", "P100-PCIE-16GB"},
      {"Tesla P100-SXM2-16GB", "P100-SXM2-16GB"},
      {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"},
      {"NVIDIA A100 80GB PCIe", "A100-PCIE-80GB"},
      {"NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"},
      {"NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"},
      {"NVIDIA H100 PCIe", "H100-PCIE-80GB"},
      {"Tesla T4", "T4"},
      {"Tesla P40", "P40"},
      {"NVIDIA A40", "A40"},
      {"NVIDIA L40", "L40"},
      {"nvidia   a100  pcie 40 GB", "A100-PCIE-40GB"},
      // No board of that memory size: the family and form factor decide.
      {"Tesla V100-PCIE-24GB", "V100-PCIE-32GB"},
      {"NVIDIA H100-SXM5-94GB", "H100-SXM5-80GB"},
      {"Tesla V100-FHHL-16GB", "V100-PCIE-16GB"},
      {"Tesla V100-SXM3-32GB", "V100-SXM2-32GB"},
  };
  for (const auto& [query, canonical] : names) {
    INFO(query);
    const auto d = reg.try_find(query);
    REQUIRE(d);
    CHECK(d->name == canonical);
  }
  // What is left after the suffixes must still be a family: other chips stay unknown.
  for (const char* other : {"Tesla V200-PCIE-32GB", "NVIDIA A100X", "RTX 3070 8GB", "Tesla", "80GB PCIe", "NVIDIA A10-PCIE"}) {
    INFO(other);
    if (std::string(other) == "NVIDIA A10-PCIE") {
      CHECK(reg.try_find(other)->name == "A10");  // the family "a10" is A10, not A100
      continue;
    }
    CHECK(reg.try_find(other) == nullptr);
  }
}

TEST_CASE("an unknown device has a name, the vendor its name gives, and no numbers", "[device]") {
  const Device d = Device::unknown("Tesla Z900-PCIE-64GB");
  CHECK(d.name == "Tesla Z900-PCIE-64GB");
  CHECK(d.vendor == "NVIDIA");
  CHECK_FALSE(d.has_numbers());
  CHECK(d.sm_arch().empty());
  for (std::size_t i = 0; i + 1 < d.numeric_features().size(); ++i) CHECK(d.numeric_features()[i] == 0.0);
  CHECK(Device::unknown("AMD Instinct MI999").vendor == "AMD");
  CHECK(Device::unknown("Lab box 3").vendor.empty());
  CHECK(find_device("T4")->has_numbers());
}
