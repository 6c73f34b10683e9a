// Parsers of the ptxas report and the PTX instruction mix, on fixed text. Compiled kernels with
// known values are checked in nvrtc_compiler_test.
#include "runtime/static_features.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpuforecast;

TEST_CASE("ptxas report: the entry's resources", "[runtime][features]") {
  const char* log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'helper_entry' for 'sm_90'\n"
      "ptxas info    : Function properties for helper_entry\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 8 registers, 360 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1kPf\n"
      "ptxas         .     256 bytes stack frame, 40 bytes spill stores, 36 bytes spill loads\n"
      "ptxas info    : Used 42 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem, "
      "360 bytes cmem[0], 8 bytes cmem[2]\n"
      "ptxas info    : Compile time = 17.026 ms\n";
  auto f = parse_ptxas_report(log, "_Z1kPf");
  CHECK(f.at("registers") == 42);
  CHECK(f.at("barriers") == 1);
  CHECK(f.at("static_shared_memory_bytes") == 1024);
  CHECK(f.at("local_memory_bytes") == 256);
  CHECK(f.at("spill_stores_bytes") == 40);
  CHECK(f.at("spill_loads_bytes") == 36);
  CHECK(f.at("constant_memory_bytes") == 368);
  auto g = parse_ptxas_report(log, "helper_entry");
  CHECK(g.at("registers") == 8);
  CHECK(g.at("static_shared_memory_bytes") == 0);
  CHECK(g.at("barriers") == 0);
  CHECK(parse_ptxas_report("no report here").empty());
}

TEST_CASE("PTX instruction mix", "[runtime][features]") {
  const char* ptx = R"(
.visible .entry k(
	.param .u64 k_param_0
)
{
	.reg .pred 	%p<2>;
	// a comment: ld.global.f32 must not count
	ld.param.u64 	%rd1, [k_param_0];
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd1];
	ld.global.f32 	%f5, [%rd1+16];
	st.shared.f32 	[%r1], %f5;
	ld.shared::cta.f32 	%f6, [%r1];
	st.local.f32 	[%rd2], %f6;
	ld.local.f32 	%f7, [%rd2];
	ld.const.f32 	%f8, [c];
	fma.rn.f32 	%f9, %f1, %f2, %f3;
	fma.rn.f64 	%fd1, %fd2, %fd3, %fd4;
	fma.rn.f16x2 	%r5, %r6, %r7, %r8;
	mul.f32 	%f10, %f1, %f2;
	mul.lo.s32 	%r2, %r1, 3;
	mul.wide.u32 	%rd3, %r2, 4;
	mad.lo.s32 	%r3, %r1, %r2, %r1;
	add.f32 	%f11, %f1, %f2;
	sub.f64 	%fd5, %fd1, %fd2;
	add.s64 	%rd4, %rd3, %rd1;
	ex2.approx.ftz.f32 	%f12, %f11;
	rcp.rn.f32 	%f13, %f12;
	rcp.approx.f32 	%f14, %f12;
	setp.lt.s32 	%p1, %r1, 5;
	@%p1 bra 	$L__BB0_2;
	bar.sync 	0;
	bar.warp.sync 	-1;
	atom.global.add.f32 	%f15, [%rd1], %f1;
	red.global.add.u32 	[%rd1], 1;
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};
	cp.async.ca.shared.global 	[%r1], [%rd1], 16;
	st.global.v2.f32 	[%rd1], {%f1, %f2};
$L__BB0_2:
	ret;
}
)";
  auto f = ptx_instruction_mix(ptx);
  CHECK(f.at("ptx_ld_global") == 2);
  CHECK(f.at("ptx_st_global") == 1);
  CHECK(f.at("ptx_ld_shared") == 1);
  CHECK(f.at("ptx_st_shared") == 1);
  CHECK(f.at("ptx_ld_local") == 1);
  CHECK(f.at("ptx_st_local") == 1);
  CHECK(f.at("ptx_ld_const") == 1);
  CHECK(f.at("ptx_vector_memory") == 2);
  CHECK(f.at("ptx_fma_f32") == 1);
  CHECK(f.at("ptx_fma_f64") == 1);
  CHECK(f.at("ptx_fma_f16") == 1);
  CHECK(f.at("ptx_mul_f32") == 1);
  CHECK(f.at("ptx_mul_int") == 3);
  CHECK(f.at("ptx_add_f32") == 1);
  CHECK(f.at("ptx_add_f64") == 1);
  CHECK(f.at("ptx_add_int") == 1);
  CHECK(f.at("ptx_sfu") == 2);
  CHECK(f.at("ptx_branch") == 1);
  CHECK(f.at("ptx_barrier") == 1);
  CHECK(f.at("ptx_atomic") == 2);
  CHECK(f.at("ptx_mma") == 1);
  CHECK(f.at("ptx_cp_async") == 1);
  CHECK(f.at("ptx_total") == 31);
}

TEST_CASE("feature names cover both sources", "[runtime][features]") {
  const auto& n = static_feature_names();
  CHECK(n.front() == "registers");
  CHECK(n.back() == "ptx_total");
  for (const auto& [k, v] : ptx_instruction_mix("")) CHECK(std::find(n.begin(), n.end(), k) != n.end());
}
