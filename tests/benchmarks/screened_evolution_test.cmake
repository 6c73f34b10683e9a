# benchmarks/screened_evolution on one small space: it prints the family verdicts, a rerun reads
# the stored outcome instead of running it again, with and without the per-GPU views, and a broken
# results file is refused by line.
include(${CMAKE_CURRENT_LIST_DIR}/../tools/shared_data.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/../tools/run_command.cmake)
set(run_program_name screened_evolution)
shared_data_file(space benchmark_hub/cachefiles/pnpoly/RTX_3090.json.gz)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(args --data "${data}" --kernels pnpoly --devices RTX_3090 --seeds 2 --budget 40 --children 4
         --rehearsal-seeds 1 --threads 2 --results "${WORK}/results.jsonl")
run(first ok "0 spaces stored, 1 to run" ${args})
if(NOT first_out MATCHES "pnpoly/RTX_3090 +[0-9.]+ +[0-9]+% +[0-9.]+ +[0-9]+/2")
  message(FATAL_ERROR "no screening row for pnpoly/RTX_3090 in:\n${first_out}")
endif()
if(NOT first_out MATCHES "pnpoly \\(family\\)[^\n]*screened vs plain  25: [0-9.]+±[0-9.]+ vs [0-9.]+±[0-9.]+ (ahead|level|BEHIND)")
  message(FATAL_ERROR "no family verdict for pnpoly in:\n${first_out}")
endif()

# The rerun runs nothing and prints the same table.
run(again ok "1 spaces stored, 0 to run" ${args})
if(NOT first_out STREQUAL again_out)
  message(FATAL_ERROR "the resumed table differs:\n${first_out}\n${again_out}")
endif()
# The model stacks its per-GPU views by default; --views off is the model trained on the GPUs
# together, another setting, which is not read from the file: it runs.
if(NOT first_out MATCHES "other GPUs with their views stacked by the run")
  message(FATAL_ERROR "the table does not say the views are stacked:\n${first_out}")
endif()
run(no_views ok "0 spaces stored, 1 to run" ${args} --views off)
if(no_views_out MATCHES "views stacked")
  message(FATAL_ERROR "--views off still says the views are stacked:\n${no_views_out}")
endif()
run(bad_views fail "--views takes on or off, got maybe" ${args} --views maybe)

# Where the rehearsal runs and how its GPUs combine are settings of their own: they run, and the
# table says which.
run(vendor ok "0 spaces stored, 1 to run" ${args} --rehearsal vendor)
if(NOT vendor_out MATCHES "other GPUs of the target's vendor \\(1 seeds each\\), the widest of their margins")
  message(FATAL_ERROR "--rehearsal vendor is not shown:\n${vendor_out}")
endif()
run(pooled ok "0 spaces stored, 1 to run" ${args} --pool-rehearsal)
if(NOT pooled_out MATCHES "other GPUs \\(1 seeds each\\), pooled into one margin")
  message(FATAL_ERROR "--pool-rehearsal is not shown:\n${pooled_out}")
endif()
run(bad_rehearsal fail "--rehearsal takes all or vendor, got some" ${args} --rehearsal some)
# --oracle adds the share an oracle margin on the target's own children screens out, per space and
# family.
run(oracle ok "0 spaces stored, 1 to run" ${args} --oracle)
if(NOT oracle_out MATCHES "pnpoly/RTX_3090 [^\n]* oracle out [0-9]+%\n" OR NOT oracle_out MATCHES "pnpoly \\(family\\)[^\n]* oracle out [0-9]+%")
  message(FATAL_ERROR "no oracle share in:\n${oracle_out}")
endif()
if(first_out MATCHES "oracle")
  message(FATAL_ERROR "an oracle share without --oracle:\n${first_out}")
endif()

# A broken line (the sixth: five runs wrote one each) is refused with the file and its line.
file(APPEND "${WORK}/results.jsonl" "{not json\n")
run(broken fail "results.jsonl:line 6: " ${args})
