#include "gpuforecast/farm.hpp"

#include <fmt/core.h>

#include <chrono>
#include <csignal>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "farm/mpi_messages.hpp"
#include "farm/wire.hpp"
#include "farm/worker_faults.hpp"
#include "common/parse_number.hpp"
#include "gpuforecast/core/error.hpp"

namespace gpuforecast {

namespace {
constexpr auto idle_pause = std::chrono::microseconds(200);

Measurement measure_one(const FarmMeasureFunction& measure, const Candidate& c) {
  try {
    auto r = measure(std::span<const Candidate>(&c, 1));
    if (r.size() != 1) throw invalid_argument_error(fmt::format("benchmarker returned {} results for 1 candidate", r.size()));
    return std::move(r.front());
  } catch (const std::exception& e) {
    // The rank stays up: the error is this candidate's result, told to rank 0.
    Measurement m;
    m.status = Status::runtime_failed;
    m.reason = fmt::format("farm worker: {}", e.what());
    return m;
  }
}
}  // namespace

void refuse_farm(const std::string& reason) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) throw invalid_argument_error("refuse_farm: rank 0 coordinates; workers are ranks 1 and up");
  detail::mpi::send(0, detail::wire::refuse, reason);
}

detail::farm::WorkerFaults detail::farm::parse_worker_faults(const std::string& spec, int rank) {
  WorkerFaults faults;
  if (spec.empty()) return faults;
  std::vector<std::string> parts;
  for (std::size_t from = 0;;) {
    const auto colon = spec.find(':', from);
    parts.push_back(spec.substr(from, colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  if (parts.size() != 3 || (parts[1] != "die" && parts[1] != "hang"))
    throw invalid_argument_error(fmt::format("--farm-fault {}: give RANK:die:N or RANK:hang:N", spec));
  if (detail::parse_number<int>("--farm-fault RANK", parts[0]) == rank)
    (parts[1] == "die" ? faults.die_after : faults.hang_after) =
        detail::parse_number<std::size_t>("--farm-fault N", parts[2]);
  return faults;
}

void serve_farm(const FarmMeasureFunction& measure, const Candidate& prototype, const FarmWorkerOptions& options) {
  detail::farm::serve_farm(measure, prototype, options, {});
}

void detail::farm::serve_farm(const FarmMeasureFunction& measure, const Candidate& prototype,
                             const FarmWorkerOptions& options, const WorkerFaults& faults) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) throw invalid_argument_error("serve_farm: rank 0 coordinates; workers are ranks 1 and up");
  if (!(options.heartbeat_interval_s > 0)) throw invalid_argument_error("farm: heartbeat_interval_s must be > 0");
  detail::mpi::send(0, detail::wire::hello, options.device);
  const auto beat = std::chrono::duration<double>(options.heartbeat_interval_s);
  ParameterNames names;
  std::size_t results = 0;
  for (;;) {
    auto m = detail::mpi::poll(0);
    if (!m) {
      std::this_thread::sleep_for(idle_pause);
      continue;
    }
    if (m->tag == detail::wire::stop) return;
    if (m->tag != detail::wire::job) continue;
    std::uint64_t id = 0;
    Candidate c = prototype;
    c.config = detail::wire::decode_job(m->body, id, names);
    if (faults.hang_after > 0 && results == faults.hang_after)
      std::this_thread::sleep_for(std::chrono::duration<double>(faults.hang_seconds));
    // Measure on a second thread; this one, the only one that talks MPI, keeps the heartbeat.
    auto pending = std::async(std::launch::async, [&] { return measure_one(measure, c); });
    while (pending.wait_for(beat) != std::future_status::ready)
      detail::mpi::send(0, detail::wire::heartbeat, detail::wire::encode_id(id));
    detail::mpi::send(0, detail::wire::result, detail::wire::encode_result(id, pending.get()));
    ++results;
    if (faults.die_after > 0 && results == faults.die_after) std::raise(SIGKILL);
  }
}

}  // namespace gpuforecast
