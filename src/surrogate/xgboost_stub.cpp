// Built instead of xgboost.cpp when XGBoost is absent: the type exists, its use says why not.
#include "gpuforecast/core/error.hpp"
#include "surrogate/xgboost.hpp"

#include "boosting.hpp"

namespace gpuforecast {

bool xgboost_available() noexcept { return false; }

namespace {
[[noreturn]] void absent() {
  throw invalid_argument_error("the xgboost surrogate is not in this build (XGBoost was not found at configure time; "
                               "install libxgboost-dev and reconfigure)");
}
}  // namespace

struct XgboostSurrogate::State {};
XgboostSurrogate::XgboostSurrogate(XgboostOptions options) : m_options(std::move(options)) {}
void XgboostSurrogate::fit(std::span<const Observation>) { absent(); }
void XgboostSurrogate::update(std::span<const Observation>) { absent(); }
std::vector<Forecast> XgboostSurrogate::predict(std::span<const Candidate>) const { absent(); }
void XgboostSurrogate::save(ArchiveWriter&) const { absent(); }
XgboostSurrogate XgboostSurrogate::load(ArchiveReader&) { absent(); }

namespace detail {
FlatTrees boost_flat_trees(const std::vector<float>&, std::size_t, const std::vector<float>&, const XgboostOptions&,
                           bool, std::vector<double>*, const std::vector<float>*) {
  throw invalid_argument_error("training boosted trees needs XGBoost, which is not in this build (install "
                               "libxgboost-dev and reconfigure); models trained elsewhere load and forecast without it");
}
}  // namespace detail

}  // namespace gpuforecast
