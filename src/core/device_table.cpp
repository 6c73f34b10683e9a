// The built-in device table. Numbers come from the vendors' public spec sheets and
// whitepapers (see docs/devices.md for the sources and for which numbers are derived).
#include "core/device_table.hpp"

namespace gpuforecast::detail {

namespace {

// Keeps every row on one line: name, vendor, architecture, cc, SMs/CUs, boost MHz, GB/s,
// memory GB, last-level cache MiB, shared memory KiB per SM, registers per SM, warp, FP32 TFLOP/s.
Device row(std::string name, std::string vendor, std::string architecture, int cc_major, int cc_minor,
           int sm_count, double clock_mhz, double bandwidth_gbs, double memory_gib, double l2_mib,
           double shared_kib, int registers, int warp, double fp32_tflops, std::vector<std::string> aliases) {
  Device d;
  d.name = std::move(name);
  d.vendor = std::move(vendor);
  d.architecture = std::move(architecture);
  d.compute_capability_major = cc_major;
  d.compute_capability_minor = cc_minor;
  d.sm_count = sm_count;
  d.core_clock_mhz = clock_mhz;
  d.memory_bandwidth_gbs = bandwidth_gbs;
  d.memory_gib = memory_gib;
  d.l2_cache_mib = l2_mib;
  d.shared_memory_per_sm_kib = shared_kib;
  d.registers_per_sm = registers;
  d.max_threads_per_block = 1024;
  d.warp_size = warp;
  d.peak_fp32_tflops = fp32_tflops;
  d.aliases = std::move(aliases);
  return d;
}

constexpr int kRegs64k = 65536;

}  // namespace

std::vector<Device> builtin_devices() {
  std::vector<Device> t;
  // ---- NVIDIA (compute capability, SMs, boost clock from the product briefs) ----
  t.push_back(row("K20", "NVIDIA", "kepler", 3, 5, 13, 706, 208, 5, 1.25, 48, kRegs64k, 32, 3.52,
                  {"Tesla K20", "K20c", "K20m", "Tesla K20c", "Tesla K20m"}));
  t.push_back(row("GTX Titan X", "NVIDIA", "maxwell", 5, 2, 24, 1075, 336.5, 12, 3, 96, kRegs64k, 32, 6.6,
                  {"GeForce GTX TITAN X", "GTX_Titan_X", "Titan X Maxwell"}));
  t.push_back(row("P100-PCIE-16GB", "NVIDIA", "pascal", 6, 0, 56, 1303, 732, 16, 4, 64, kRegs64k, 32, 9.3,
                  {"P100", "Tesla P100-PCIE-16GB", "Tesla P100"}));
  t.push_back(row("P100-PCIE-12GB", "NVIDIA", "pascal", 6, 0, 56, 1303, 549, 12, 4, 64, kRegs64k, 32, 9.3,
                  {"Tesla P100-PCIE-12GB"}));
  t.push_back(row("P100-SXM2-16GB", "NVIDIA", "pascal", 6, 0, 56, 1480, 732, 16, 4, 64, kRegs64k, 32, 10.6,
                  {"Tesla P100-SXM2-16GB", "P100 SXM2"}));
  t.push_back(row("P40", "NVIDIA", "pascal", 6, 1, 30, 1531, 346, 24, 3, 96, kRegs64k, 32, 12.0, {"Tesla P40"}));
  t.push_back(row("GTX 1080 Ti", "NVIDIA", "pascal", 6, 1, 28, 1582, 484, 11, 2.75, 96, kRegs64k, 32, 11.34,
                  {"GeForce GTX 1080 Ti", "GTX_1080_Ti", "1080 Ti"}));
  t.push_back(row("V100-SXM2-16GB", "NVIDIA", "volta", 7, 0, 80, 1530, 900, 16, 6, 96, kRegs64k, 32, 15.7,
                  {"V100", "Tesla V100-SXM2-16GB", "Tesla V100"}));
  t.push_back(row("V100-SXM2-32GB", "NVIDIA", "volta", 7, 0, 80, 1530, 900, 32, 6, 96, kRegs64k, 32, 15.7,
                  {"Tesla V100-SXM2-32GB"}));
  t.push_back(row("V100-PCIE-16GB", "NVIDIA", "volta", 7, 0, 80, 1380, 900, 16, 6, 96, kRegs64k, 32, 14.0,
                  {"Tesla V100-PCIE-16GB", "V100 PCIe"}));
  t.push_back(row("V100-PCIE-32GB", "NVIDIA", "volta", 7, 0, 80, 1380, 900, 32, 6, 96, kRegs64k, 32, 14.0,
                  {"Tesla V100-PCIE-32GB"}));
  t.push_back(row("T4", "NVIDIA", "turing", 7, 5, 40, 1590, 320, 16, 4, 64, kRegs64k, 32, 8.1, {"Tesla T4"}));
  t.push_back(row("RTX 2070 Super", "NVIDIA", "turing", 7, 5, 40, 1770, 448, 8, 4, 64, kRegs64k, 32, 9.06,
                  {"GeForce RTX 2070 SUPER", "RTX_2070_Super", "2070 Super"}));
  t.push_back(row("RTX 2080 Ti", "NVIDIA", "turing", 7, 5, 68, 1545, 616, 11, 5.5, 64, kRegs64k, 32, 13.45,
                  {"NVIDIA GeForce RTX 2080 Ti", "RTX_2080_Ti", "2080 Ti"}));
  t.push_back(row("TITAN RTX", "NVIDIA", "turing", 7, 5, 72, 1770, 672, 24, 6, 64, kRegs64k, 32, 16.3,
                  {"NVIDIA TITAN RTX", "RTX_Titan", "Titan RTX"}));
  t.push_back(row("A100-PCIE-40GB", "NVIDIA", "ampere", 8, 0, 108, 1410, 1555, 40, 40, 164, kRegs64k, 32, 19.5,
                  {"NVIDIA A100-PCIE-40GB", "A100", "A100 PCIe", "A100-PCIE"}));
  t.push_back(row("A100-SXM4-80GB", "NVIDIA", "ampere", 8, 0, 108, 1410, 2039, 80, 40, 164, kRegs64k, 32, 19.5,
                  {"NVIDIA A100-SXM4-80GB", "A100 SXM", "A100-SXM4"}));
  t.push_back(row("A100-SXM4-40GB", "NVIDIA", "ampere", 8, 0, 108, 1410, 1555, 40, 40, 164, kRegs64k, 32, 19.5,
                  {"NVIDIA A100-SXM4-40GB"}));
  t.push_back(row("A100-PCIE-80GB", "NVIDIA", "ampere", 8, 0, 108, 1410, 1935, 80, 40, 164, kRegs64k, 32, 19.5,
                  {"NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-80GB"}));
  t.push_back(row("A10", "NVIDIA", "ampere", 8, 6, 72, 1695, 600, 24, 6, 100, kRegs64k, 32, 31.2, {"NVIDIA A10"}));
  t.push_back(row("A10G", "NVIDIA", "ampere", 8, 6, 80, 1710, 600, 24, 6, 100, kRegs64k, 32, 35.0, {"NVIDIA A10G"}));
  t.push_back(row("RTX A4000", "NVIDIA", "ampere", 8, 6, 48, 1560, 448, 16, 4, 100, kRegs64k, 32, 19.2,
                  {"NVIDIA RTX A4000", "A4000"}));
  t.push_back(row("RTX A6000", "NVIDIA", "ampere", 8, 6, 84, 1800, 768, 48, 6, 100, kRegs64k, 32, 38.7,
                  {"NVIDIA RTX A6000", "A6000"}));
  t.push_back(row("A40", "NVIDIA", "ampere", 8, 6, 84, 1740, 696, 48, 6, 100, kRegs64k, 32, 37.4, {"NVIDIA A40"}));
  t.push_back(row("RTX 3060 Laptop GPU", "NVIDIA", "ampere", 8, 6, 30, 1703, 336, 6, 3, 100, kRegs64k, 32, 13.1,
                  {"NVIDIA GeForce RTX 3060 Laptop GPU", "RTX_3060_laptop", "RTX 3060 Laptop", "RTX 3060 Mobile"}));
  t.push_back(row("RTX 3080", "NVIDIA", "ampere", 8, 6, 68, 1710, 760, 10, 5, 100, kRegs64k, 32, 29.8,
                  {"NVIDIA GeForce RTX 3080", "RTX_3080"}));
  t.push_back(row("RTX 3090", "NVIDIA", "ampere", 8, 6, 82, 1695, 936, 24, 6, 100, kRegs64k, 32, 35.6,
                  {"NVIDIA GeForce RTX 3090", "RTX_3090"}));
  t.push_back(row("L4", "NVIDIA", "ada", 8, 9, 58, 2040, 300, 24, 48, 100, kRegs64k, 32, 30.3, {"NVIDIA L4"}));
  t.push_back(row("L40", "NVIDIA", "ada", 8, 9, 142, 2490, 864, 48, 96, 100, kRegs64k, 32, 90.5, {"NVIDIA L40"}));
  t.push_back(row("L40S", "NVIDIA", "ada", 8, 9, 142, 2520, 864, 48, 96, 100, kRegs64k, 32, 91.6, {"NVIDIA L40S"}));
  t.push_back(row("RTX 4090", "NVIDIA", "ada", 8, 9, 128, 2520, 1008, 24, 72, 100, kRegs64k, 32, 82.6,
                  {"NVIDIA GeForce RTX 4090", "RTX_4090"}));
  t.push_back(row("H100-SXM5-80GB", "NVIDIA", "hopper", 9, 0, 132, 1980, 3350, 80, 50, 228, kRegs64k, 32, 67.0,
                  {"H100", "NVIDIA H100 80GB HBM3", "H100 SXM", "H100-SXM5", "H100 SXM5"}));
  t.push_back(row("H100-PCIE-80GB", "NVIDIA", "hopper", 9, 0, 114, 1755, 2000, 80, 50, 228, kRegs64k, 32, 51.2,
                  {"NVIDIA H100 PCIe", "H100 PCIe", "H100-PCIE"}));
  t.push_back(row("H200", "NVIDIA", "hopper", 9, 0, 132, 1980, 4800, 141, 50, 228, kRegs64k, 32, 67.0,
                  {"NVIDIA H200", "H200 SXM", "H200-SXM-141GB"}));
  // B200: the SM count and clock are the shipping HGX B200 configuration; FP32 is derived as
  // SMs x 128 lanes x 2 x boost clock (NVIDIA's brief lists tensor throughput only).
  t.push_back(row("B200", "NVIDIA", "blackwell", 10, 0, 148, 1965, 8000, 180, 126, 228, kRegs64k, 32, 74.4,
                  {"NVIDIA B200", "B200 SXM"}));

  // ---- AMD (compute units, peak engine clock; Infinity Cache counted as the last level) ----
  t.push_back(row("MI50", "AMD", "gcn5", 0, 0, 60, 1725, 1024, 16, 4, 64, 65536, 64, 13.3,
                  {"Instinct MI50", "Radeon Instinct MI50"}));
  t.push_back(row("MI100", "AMD", "cdna1", 0, 0, 120, 1502, 1228.8, 32, 8, 64, 131072, 64, 23.1,
                  {"Instinct MI100"}));
  t.push_back(row("MI210", "AMD", "cdna2", 0, 0, 104, 1700, 1638.4, 64, 8, 64, 131072, 64, 22.6,
                  {"Instinct MI210"}));
  // One MI250X package holds two GCDs that software sees as two devices; the row describes
  // one GCD (what a kernel runs on, and what the benchmark_hub measurements used).
  t.push_back(row("MI250X", "AMD", "cdna2", 0, 0, 110, 1700, 1638.4, 64, 8, 64, 131072, 64, 23.95,
                  {"Instinct MI250X", "MI250X GCD"}));
  t.push_back(row("MI300X", "AMD", "cdna3", 0, 0, 304, 2100, 5300, 192, 256, 64, 131072, 64, 81.7,
                  {"Instinct MI300X"}));
  t.push_back(row("Radeon PRO W6600", "AMD", "rdna2", 0, 0, 28, 2903, 224, 8, 32, 64, 65536, 32, 10.4,
                  {"AMD Radeon PRO W6600", "W6600"}));
  t.push_back(row("Radeon PRO W7800", "AMD", "rdna3", 0, 0, 70, 2499, 576, 32, 64, 64, 98304, 32, 45.2,
                  {"AMD Radeon PRO W7800", "W7800"}));
  t.push_back(row("RX 7900 XTX", "AMD", "rdna3", 0, 0, 96, 2500, 960, 24, 96, 64, 98304, 32, 61.4,
                  {"AMD Radeon RX 7900 XTX", "Radeon RX 7900 XTX"}));
  return t;
}

}  // namespace gpuforecast::detail
