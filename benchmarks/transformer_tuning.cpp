// Chooses the transformer's defaults: trains on a random fraction of NVIDIA spaces and prints
// rank quality (Spearman, recall of the true top 1% in the predicted top 5%), training time, and
// the inference throughput on the whole of each space.
//   transformer_tuning [--fractions 0.02,0.1] [--seeds 2] [--spaces convolution_milo/A100,...]
//                      [--width 32] [--depth 2] [--heads 4] [--epochs E] [--max-steps S]
//                      [--min-steps S] [--lr X] [--rank-weight X] [--batch B] [--ffn M]
//                      [--patience P] [--val F] [--threads T] [--wd X] [--model-seed S]
//                      [--module-path 1]   (torch::nn's own encoder forward: the reference)
//   transformer_tuning --transfer dedispersion_milo/A100,... [--k 0,20,100]   (unseen device)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "common/parse_number.hpp"
#include "gpuforecast/data/dataset.hpp"
#include "surrogate/transformer.hpp"
#include "surrogate/openmp_environment.hpp"
#include "surrogate/transformer/inference_path.hpp"
#include "common/split_list.hpp"

using namespace gpuforecast;

namespace {

using gpuforecast::detail::split_list;

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> o(v.size());
  std::iota(o.begin(), o.end(), 0);
  std::sort(o.begin(), o.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < o.size();) {
    std::size_t j = i;
    while (j + 1 < o.size() && v[o[j + 1]] == v[o[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[o[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// Recall of the true top 1% inside the predicted top 5%.
double top_recall(const std::vector<double>& truth, const std::vector<double>& pred) {
  const std::size_t n = truth.size();
  std::vector<std::size_t> t(n), p(n);
  std::iota(t.begin(), t.end(), 0);
  std::iota(p.begin(), p.end(), 0);
  std::sort(t.begin(), t.end(), [&](auto a, auto b) { return truth[a] < truth[b]; });
  std::sort(p.begin(), p.end(), [&](auto a, auto b) { return pred[a] < pred[b]; });
  const std::size_t k1 = std::max<std::size_t>(1, n / 100), k5 = std::max<std::size_t>(1, n / 20);
  std::vector<char> in5(n, 0);
  for (std::size_t i = 0; i < k5; ++i) in5[p[i]] = 1;
  std::size_t hit = 0;
  for (std::size_t i = 0; i < k1; ++i) hit += in5[t[i]];
  return static_cast<double>(hit) / static_cast<double>(k1);
}

struct Settings {
  std::vector<double> fractions{0.02, 0.1};
  int seeds = 2;
  std::vector<std::string> spaces{"convolution_milo/A100", "dedispersion_milo/A100"};
  TransformerOptions transformer;
  std::uint64_t model_seed = 0;     // added to the split seed
  std::vector<std::string> transfer;  // kernel/DEVICE targets, e.g. dedispersion_milo/A100
  std::vector<int> ks{0, 20, 100};
  std::string data;                 // the shared datasets
};

// The options of the usage line above; none (and a line on stderr) for an option it does not know.
std::optional<Settings> parse_arguments(int argc, char** argv) {
  Settings s;
  TransformerOptions& opt = s.transformer;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--fractions") {
      s.fractions.clear();
      for (auto& f : split_list(v)) s.fractions.push_back(detail::parse_number<double>(k, f));
    } else if (k == "--seeds") detail::parse_number_into(s.seeds, k, v);
    else if (k == "--spaces") s.spaces = split_list(v);
    else if (k == "--width") detail::parse_number_into(opt.width, k, v);
    else if (k == "--depth") detail::parse_number_into(opt.depth, k, v);
    else if (k == "--heads") detail::parse_number_into(opt.heads, k, v);
    else if (k == "--epochs") detail::parse_number_into(opt.epochs, k, v);
    else if (k == "--max-steps") detail::parse_number_into(opt.max_steps, k, v);
    else if (k == "--min-steps") detail::parse_number_into(opt.min_steps, k, v);
    else if (k == "--lr") detail::parse_number_into(opt.lr, k, v);
    else if (k == "--rank-weight") detail::parse_number_into(opt.rank_weight, k, v);
    else if (k == "--batch") detail::parse_number_into(opt.batch_size, k, v);
    else if (k == "--ffn") detail::parse_number_into(opt.ffn_multiplier, k, v);
    else if (k == "--patience") detail::parse_number_into(opt.patience, k, v);
    else if (k == "--val") detail::parse_number_into(opt.validation_fraction, k, v);
    else if (k == "--threads") detail::parse_number_into(opt.threads, k, v);
    else if (k == "--module-path") detail::transformer::set_module_path(v != "0");
    else if (k == "--wd") detail::parse_number_into(opt.weight_decay, k, v);
    else if (k == "--infer-batch") detail::parse_number_into(opt.inference_batch, k, v);
    else if (k == "--model-seed") detail::parse_number_into(s.model_seed, k, v);
    else if (k == "--transfer") s.transfer = split_list(v);
    else if (k == "--k") {
      s.ks.clear();
      for (auto& x : split_list(v)) s.ks.push_back(detail::parse_number<int>(k, x));
    }
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return std::nullopt;
    }
  }
  const char* env = std::getenv("GPUFORECAST_DATA");
  s.data = env && *env ? env : std::string(GPUFORECAST_SOURCE_DIR) + "/../shared/datasets";
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The successful measurements of `observations` not marked used, as candidates and true times.
struct HeldOut {
  std::vector<Candidate> candidates;
  std::vector<double> truth;
};

HeldOut held_out(const std::vector<Observation>& observations, const std::vector<char>* used = nullptr) {
  HeldOut h;
  for (std::size_t i = 0; i < observations.size(); ++i)
    if ((!used || !(*used)[i]) && observations[i].measurement.ok()) {
      h.candidates.push_back(observations[i].candidate);
      h.truth.push_back(observations[i].measurement.median_ms);
    }
  return h;
}

std::vector<double> predicted_ms(const TransformerSurrogate& model, const std::vector<Candidate>& candidates) {
  std::vector<double> pred;
  for (const auto& x : model.predict(candidates)) pred.push_back(x.median_ms);
  return pred;
}

// Unseen device: trained on the kernel's other NVIDIA devices plus K random target points,
// judged on the target's other points.
void transfer_table(const Settings& s) {
  std::printf("%-28s %5s %9s %9s %7s %6s\n", "target", "K", "spearman", "top1%rec", "fit_s", "steps");
  for (const auto& t : s.transfer) {
    const auto kernel = t.substr(0, t.find('/'));
    const auto target = t.substr(t.find('/') + 1);
    std::vector<std::string> paths;
    for (const char* d : {"A100", "A4000", "A6000"})
      paths.push_back(s.data + "/benchmark_hub/cachefiles/" + kernel + "/" + d + ".json.gz");
    const auto ds = Dataset::load(paths);
    std::string target_name;
    for (const auto& sp : ds.spaces())
      if (sp.path.find("/" + target + ".json") != std::string::npos) target_name = sp.device->name;
    const auto split = ds.split_by_device(target_name, false);
    for (int k : s.ks) {
      std::vector<Observation> train = split.train;
      std::vector<std::size_t> order(split.test.size());
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(s.model_seed);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<char> used(split.test.size(), 0);
      for (int i = 0; i < k; ++i) {
        train.push_back(split.test[order[static_cast<std::size_t>(i)]]);
        used[order[static_cast<std::size_t>(i)]] = 1;
      }
      TransformerOptions o = s.transformer;
      o.seed = s.model_seed;
      TransformerSurrogate model(o);
      const auto t0 = std::chrono::steady_clock::now();
      model.fit(train);
      const double fit_s = seconds_since(t0);
      const HeldOut test = held_out(split.test, &used);
      const auto pred = predicted_ms(model, test.candidates);
      std::printf("%-28s %5d %9.4f %9.3f %7.2f %6d\n", t.c_str(), k, spearman(test.truth, pred),
                  top_recall(test.truth, pred), fit_s, model.last_training().steps);
      std::fflush(stdout);
    }
  }
}

// One trained model's speeds: forecasts per second over the whole space, update() with `fresh`
// (new measurements, as inside a search), and the median latency of a single-candidate forecast.
struct Speeds {
  double forecasts_per_s = 0, update_s = 0, single_p50_ms = 0;
};

Speeds speeds(const TransformerSurrogate& model, const std::vector<Candidate>& all, std::span<const Observation> fresh,
              const std::vector<Candidate>& test) {
  Speeds sp;
  const auto t1 = std::chrono::steady_clock::now();
  const auto whole = model.predict(all);
  sp.forecasts_per_s = static_cast<double>(whole.size()) / seconds_since(t1);
  TransformerSurrogate online = model;
  const auto t2 = std::chrono::steady_clock::now();
  online.update(fresh);
  sp.update_s = seconds_since(t2);
  std::vector<double> lat;
  for (std::size_t i = 0; i < 50 && i < test.size(); ++i) {
    const std::vector<Candidate> one{test[i]};
    const auto t3 = std::chrono::steady_clock::now();
    (void)model.predict(one);
    lat.push_back(1e3 * seconds_since(t3));
  }
  std::sort(lat.begin(), lat.end());
  sp.single_p50_ms = lat.empty() ? 0.0 : lat[lat.size() / 2];
  return sp;
}

// Each space trained on random fractions of itself, judged on the rest.
void fraction_table(const Settings& s) {
  std::printf("%-28s %6s %4s %9s %9s %7s %6s %10s %9s %8s\n", "space", "frac", "seed", "spearman", "top1%rec", "fit_s",
              "steps", "fc/s", "update_s", "p50_ms");
  double sum_rho = 0, sum_rec = 0;
  int count = 0;
  for (const auto& name : s.spaces) {
    const auto ds = Dataset::load(std::vector<std::string>{s.data + "/benchmark_hub/cachefiles/" + name + ".json.gz"});
    std::vector<Candidate> all;
    for (const auto& o : ds.spaces().front().observations) all.push_back(o.candidate);
    for (double f : s.fractions) {
      for (int seed = 0; seed < s.seeds; ++seed) {
        const auto split = ds.split_random(f, static_cast<std::uint64_t>(seed), false);
        TransformerOptions o = s.transformer;
        o.seed = static_cast<std::uint64_t>(seed) + s.model_seed;
        TransformerSurrogate model(o);
        const auto t0 = std::chrono::steady_clock::now();
        model.fit(split.train);
        const double fit_s = seconds_since(t0);
        const HeldOut test = held_out(split.test);
        const auto pred = predicted_ms(model, test.candidates);
        // update() inside a search: 100 new measurements.
        const auto fresh = std::span<const Observation>(split.test).first(std::min<std::size_t>(100, split.test.size()));
        const Speeds sp = speeds(model, all, fresh, test.candidates);
        const double rho = spearman(test.truth, pred), rec = top_recall(test.truth, pred);
        sum_rho += rho;
        sum_rec += rec;
        ++count;
        std::printf("%-28s %6.3f %4d %9.4f %9.3f %7.2f %6d %10.0f %9.3f %8.2f\n", name.c_str(), f, seed, rho, rec,
                    fit_s, model.last_training().steps, sp.forecasts_per_s, sp.update_s, sp.single_p50_ms);
        std::fflush(stdout);
      }
    }
  }
  std::printf("mean spearman %.4f  mean top1%% recall %.3f  over %d runs\n", sum_rho / count, sum_rec / count, count);
}

}  // namespace

int main(int argc, char** argv) try {
  // libtorch's OpenMP threads spin while waiting: 20x slower fits on a busy machine.
  gpuforecast::detail::ensure_passive_openmp_wait();
  const std::optional<Settings> parsed = parse_arguments(argc, argv);
  if (!parsed) return 2;
  const Settings& settings = *parsed;
  const TransformerOptions& opt = settings.transformer;
  std::printf("width=%d depth=%d heads=%d ffn=%d epochs=%d steps=[%d,%d] lr=%g rank=%g batch=%d\n", opt.width,
              opt.depth, opt.heads, opt.ffn_multiplier, opt.epochs, opt.min_steps, opt.max_steps, opt.lr,
              opt.rank_weight, opt.batch_size);
  if (!settings.transfer.empty())
    transfer_table(settings);
  else
    fraction_table(settings);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "transformer_tuning: error: %s\n", e.what());
  return 1;
}
