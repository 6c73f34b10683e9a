// LlmSurrogate: a language model behind an OpenAI-compatible endpoint, configured from Python
// (llm/llm_surrogate.hpp). Built when the library has its LLM client (libcurl).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "convert.hpp"

#if GPUFORECAST_HAVE_LLM
#include "calibration/pairwise_selective.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "llm/llm_surrogate.hpp"
#endif

namespace gpuforecast::python {

#if GPUFORECAST_HAVE_LLM
namespace {

std::string status_name(LlmAnswerStatus s) {
  switch (s) {
    case LlmAnswerStatus::ok: return "ok";
    case LlmAnswerStatus::text_only: return "text_only";
    case LlmAnswerStatus::failed: return "failed";
  }
  return "failed";
}

nb::dict counts_dict(const LlmCounts& c) {
  nb::dict d;
  d["prompts"] = c.prompts;
  d["requests"] = c.requests;
  d["cache_hits"] = c.cache_hits;
  d["answered"] = c.answered;
  d["text_only"] = c.text_only;
  d["failed"] = c.failed;
  d["retries"] = c.retries;
  return d;
}

nb::dict to_arrays(const std::vector<LlmPairForecast>& f) {
  const std::size_t n = f.size();
  std::vector<double> bins(n * speedup_bin_count);
  std::vector<std::int64_t> predicted(n);
  std::vector<std::uint8_t> faster(n), from_cache(n);
  nb::list status, error;
  for (std::size_t i = 0; i < n; ++i) {
    const LlmAnswer& a = f[i].answer;
    for (int b = 0; b < speedup_bin_count; ++b) bins[i * speedup_bin_count + b] = a.probabilities[b];
    predicted[i] = a.letter ? a.letter - 'A' + 1 : 0;
    faster[i] = f[i].answered() && called_faster(a.probabilities);
    from_cache[i] = a.from_cache;
    status.append(status_name(a.status));
    error.append(nb::str(a.error.c_str(), a.error.size()));
  }
  nb::dict out;
  out["bin_probabilities"] = owned(std::move(bins), {n, static_cast<std::size_t>(speedup_bin_count)});
  out["predicted_bin"] = owned(std::move(predicted), {n});
  out["faster"] = bool_array(std::move(faster));
  out["from_cache"] = bool_array(std::move(from_cache));
  out["status"] = status;
  out["error"] = error;
  return out;
}

}  // namespace

void bind_llm(nb::module_& m) {
  nb::class_<LlmSurrogate>(m, "LlmSurrogate",
                           "A language model behind an OpenAI-compatible endpoint that forecasts pairs (docs/llm.md).")
      .def(
          "__init__",
          [](LlmSurrogate* self, const std::string& base_url, const std::string& model, const std::string& api_key,
             const std::string& cache_dir, std::size_t in_flight, double timeout_seconds, std::size_t retries,
             double backoff_seconds, std::size_t examples) {
            LlmSurrogateOptions o;
            o.endpoint = llm_options_from_environment();  // the environment fills what is not given
            if (!base_url.empty()) o.endpoint.base_url = base_url;
            if (!model.empty()) o.endpoint.model = model;
            if (!api_key.empty()) o.endpoint.api_key = api_key;
            if (!cache_dir.empty()) o.endpoint.cache_dir = cache_dir;
            o.endpoint.in_flight = in_flight;
            o.endpoint.timeout_seconds = timeout_seconds;
            o.endpoint.retries = retries;
            o.endpoint.backoff_seconds = backoff_seconds;
            o.examples = examples;
            new (self) LlmSurrogate(std::move(o));
          },
          nb::arg("base_url") = "", nb::arg("model") = "", nb::arg("api_key") = "", nb::arg("cache_dir") = "",
          nb::arg("in_flight") = 4, nb::arg("timeout_seconds") = 60.0, nb::arg("retries") = 3,
          nb::arg("backoff_seconds") = 0.5, nb::arg("examples") = 4,
          "Endpoint settings not given come from GPUFORECAST_LLM_BASE_URL, _MODEL, _API_KEY and _CACHE.")
      .def(
          "learn",
          [](LlmSurrogate& s, const std::vector<std::string>& files) {
            nb::gil_scoped_release release;
            const Dataset data = Dataset::load(files);
            s.update(data.observations());
          },
          nb::arg("files"), "Measurements as the prompts' worked examples (and the fastest as the reference).")
      .def(
          "_compare",
          [](LlmSurrogate& s, const std::string& kernel, const std::string& device,
             const std::vector<std::int64_t>& problem_size, const std::vector<std::string>& reference_names,
             nb::handle reference_columns, const std::vector<std::string>& names, nb::handle columns, std::size_t rows) {
            const Candidate proto = prototype(kernel, device, problem_size);
            const auto reference = candidates_from(proto, reference_names, reference_columns, 1);
            const auto candidates = candidates_from(proto, names, columns, rows);
            std::vector<LlmPairForecast> out;
            {
              nb::gil_scoped_release release;
              out = s.predict_pairs(reference.front(), candidates);
            }
            return to_arrays(out);
          },
          nb::arg("kernel"), nb::arg("device"), nb::arg("problem_size"), nb::arg("reference_names"),
          nb::arg("reference_columns"), nb::arg("names"), nb::arg("columns"), nb::arg("rows"))
      .def_prop_ro("counts", [](const LlmSurrogate& s) { return counts_dict(s.counts()); },
                   "Prompts asked, requests sent, cache hits, answers and failures so far.")
      .def("describe", &LlmSurrogate::describe, "Endpoint, model and whether a key is set (never the key).");
}
#else
void bind_llm(nb::module_&) {}  // no LLM client in this build: gpuforecast.LlmSurrogate is absent
#endif

}  // namespace gpuforecast::python
