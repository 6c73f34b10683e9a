#pragma once
// Whether this process gave up on a rank: then the session cannot finalise MPI normally.
namespace gpuforecast::detail::farm {
void note_rank_lost() noexcept;
[[nodiscard]] bool ranks_lost() noexcept;
}  // namespace gpuforecast::detail::farm
