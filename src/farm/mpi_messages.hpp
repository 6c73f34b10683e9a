#pragma once
// Point-to-point messages without blocking waits: Open MPI's blocking receive spins a core,
// and a farm tested on one machine runs more ranks than it has cores.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <optional>
#include <string>
#include <vector>

namespace gpuforecast::detail::mpi {

struct Message {
  int source = 0;
  int tag = 0;
  std::string body;
};

inline void send(int to, int tag, const std::string& body) {
  MPI_Send(body.data(), static_cast<int>(body.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

// Rank 0's sends: a blocking send to a rank that died never returns (Open MPI 4.1's ob1 waits on
// the peer), and rank 0 must go on to notice the silence and give the rank up. Each message is
// kept, with its request, until MPI says it left; a message to a rank given up on is simply
// never waited for.
class Outbox {
 public:
  Outbox() = default;
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  void send(int to, int tag, std::string body) {
    m_pending.push_back(Pending{to, MPI_REQUEST_NULL, std::make_unique<std::string>(std::move(body))});
    Pending& p = m_pending.back();
    MPI_Isend(p.body->data(), static_cast<int>(p.body->size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &p.request);
  }
  // Waits until every message to a rank still trusted has left (MPI_Finalize needs them complete),
  // for at most `timeout_s`: `given_up(rank)` names those not to wait for. False when some did
  // not leave in time (a rank that died while it held no work, so was never given up on).
  template <class GivenUp>
  bool drain(GivenUp given_up, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      collect();
      if (std::none_of(m_pending.begin(), m_pending.end(), [&](const Pending& p) { return !given_up(p.to); })) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  // Forgets the messages that have left.
  void collect() {
    std::erase_if(m_pending, [](Pending& p) {
      int done = 0;
      MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
      return done != 0;
    });
  }

 private:
  struct Pending {
    int to;
    MPI_Request request;
    std::unique_ptr<std::string> body;  // where MPI reads from until the send completes
  };
  std::vector<Pending> m_pending;
};

// The next message from `source` (MPI_ANY_SOURCE: anyone), if one has arrived.
inline std::optional<Message> poll(int source = MPI_ANY_SOURCE) {
  int flag = 0;
  MPI_Status st;
  MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  if (!flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  Message m{st.MPI_SOURCE, st.MPI_TAG, std::string(static_cast<std::size_t>(count), '\0')};
  MPI_Recv(m.body.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return m;
}

}  // namespace gpuforecast::detail::mpi
