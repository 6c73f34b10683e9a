#pragma once
// Point-to-point messages without blocking waits: Open MPI's blocking receive spins a core,
// and a farm tested on one machine runs more ranks than it has cores.
#include <mpi.h>

#include <optional>
#include <string>

namespace gpuforecast::detail::mpi {

struct Message {
  int source = 0;
  int tag = 0;
  std::string body;
};

inline void send(int to, int tag, const std::string& body) {
  MPI_Send(body.data(), static_cast<int>(body.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

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
