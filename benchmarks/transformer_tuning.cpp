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
#include <random>
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

}  // namespace

int main(int argc, char** argv) try {
  // libtorch's OpenMP threads spin while waiting: 20x slower fits on a busy machine.
  gpuforecast::detail::ensure_passive_openmp_wait();
  std::vector<double> fractions{0.02, 0.1};
  int seeds = 2;
  std::vector<std::string> spaces{"convolution_milo/A100", "dedispersion_milo/A100"};
  TransformerOptions opt;
  std::uint64_t model_seed = 0;  // added to the split seed
  std::vector<std::string> transfer;
  std::vector<int> ks{0, 20, 100};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--fractions") {
      fractions.clear();
      for (auto& f : split_list(v)) fractions.push_back(detail::parse_number<double>(k, f));
    } else if (k == "--seeds") detail::parse_number_into(seeds, k, v);
    else if (k == "--spaces") spaces = split_list(v);
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
    else if (k == "--model-seed") detail::parse_number_into(model_seed, k, v);
    else if (k == "--transfer") transfer = split_list(v);  // kernel/DEVICE targets, e.g. dedispersion_milo/A100
    else if (k == "--k") {
      ks.clear();
      for (auto& x : split_list(v)) ks.push_back(detail::parse_number<int>(k, x));
    }
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  const char* env = std::getenv("GPUFORECAST_DATA");
  const std::string data = env && *env ? env : std::string(GPUFORECAST_SOURCE_DIR) + "/../shared/datasets";
  std::printf("width=%d depth=%d heads=%d ffn=%d epochs=%d steps=[%d,%d] lr=%g rank=%g batch=%d\n", opt.width,
              opt.depth, opt.heads, opt.ffn_multiplier, opt.epochs, opt.min_steps, opt.max_steps, opt.lr,
              opt.rank_weight, opt.batch_size);
  if (!transfer.empty()) {
    // Unseen device: train on the other NVIDIA devices of the kernel plus K target points.
    std::printf("%-28s %5s %9s %9s %7s %6s\n", "target", "K", "spearman", "top1%rec", "fit_s", "steps");
    for (const auto& t : transfer) {
      const auto kernel = t.substr(0, t.find('/'));
      const auto target = t.substr(t.find('/') + 1);
      std::vector<std::string> paths;
      for (const char* d : {"A100", "A4000", "A6000"})
        paths.push_back(data + "/benchmark_hub/cachefiles/" + kernel + "/" + d + ".json.gz");
      const auto ds = Dataset::load(paths);
      std::string target_name;
      for (const auto& sp : ds.spaces())
        if (sp.path.find("/" + target + ".json") != std::string::npos) target_name = sp.device->name;
      const auto split = ds.split_by_device(target_name, false);
      for (int k : ks) {
        std::vector<Observation> train = split.train;
        std::vector<std::size_t> order(split.test.size());
        std::iota(order.begin(), order.end(), 0);
        std::mt19937_64 rng(model_seed);
        std::shuffle(order.begin(), order.end(), rng);
        std::vector<char> used(split.test.size(), 0);
        for (int i = 0; i < k; ++i) {
          train.push_back(split.test[order[static_cast<std::size_t>(i)]]);
          used[order[static_cast<std::size_t>(i)]] = 1;
        }
        TransformerOptions o = opt;
        o.seed = model_seed;
        TransformerSurrogate model(o);
        const auto t0 = std::chrono::steady_clock::now();
        model.fit(train);
        const double fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<Candidate> test;
        std::vector<double> truth;
        for (std::size_t i = 0; i < split.test.size(); ++i)
          if (!used[i] && split.test[i].measurement.ok()) {
            test.push_back(split.test[i].candidate);
            truth.push_back(split.test[i].measurement.median_ms);
          }
        std::vector<double> pred;
        for (const auto& x : model.predict(test)) pred.push_back(x.median_ms);
        std::printf("%-28s %5d %9.4f %9.3f %7.2f %6d\n", t.c_str(), k, spearman(truth, pred), top_recall(truth, pred),
                    fit_s, model.last_training().steps);
        std::fflush(stdout);
      }
    }
    return 0;
  }
  std::printf("%-28s %6s %4s %9s %9s %7s %6s %10s %9s %8s\n", "space", "frac", "seed", "spearman", "top1%rec", "fit_s",
              "steps", "fc/s", "update_s", "p50_ms");
  double sum_rho = 0, sum_rec = 0;
  int count = 0;
  for (const auto& s : spaces) {
    const std::vector<std::string> paths{data + "/benchmark_hub/cachefiles/" + s + ".json.gz"};
    const auto ds = Dataset::load(paths);
    std::vector<Candidate> all;
    for (const auto& o : ds.spaces().front().observations) all.push_back(o.candidate);
    for (double f : fractions) {
      for (int seed = 0; seed < seeds; ++seed) {
        const auto split = ds.split_random(f, static_cast<std::uint64_t>(seed), false);
        TransformerOptions o = opt;
        o.seed = static_cast<std::uint64_t>(seed) + model_seed;
        TransformerSurrogate model(o);
        const auto t0 = std::chrono::steady_clock::now();
        model.fit(split.train);
        const double fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<Candidate> test;
        std::vector<double> truth;
        for (const auto& ob : split.test)
          if (ob.measurement.ok()) {
            test.push_back(ob.candidate);
            truth.push_back(ob.measurement.median_ms);
          }
        const auto fc = model.predict(test);
        std::vector<double> pred;
        for (const auto& x : fc) pred.push_back(x.median_ms);
        const auto t1 = std::chrono::steady_clock::now();
        const auto whole = model.predict(all);
        const double per_s = static_cast<double>(whole.size()) /
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        // update() inside a search: 100 new measurements.
        std::vector<Observation> fresh(split.test.begin(),
                                       split.test.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(100, split.test.size())));
        TransformerSurrogate online = model;
        const auto t2 = std::chrono::steady_clock::now();
        online.update(fresh);
        const double update_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
        // Single-candidate latency (median of 50 calls).
        std::vector<double> lat;
        for (std::size_t i = 0; i < 50 && i < test.size(); ++i) {
          const std::vector<Candidate> one{test[i]};
          const auto t3 = std::chrono::steady_clock::now();
          (void)model.predict(one);
          lat.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t3).count());
        }
        std::sort(lat.begin(), lat.end());
        const double rho = spearman(truth, pred), rec = top_recall(truth, pred);
        sum_rho += rho;
        sum_rec += rec;
        ++count;
        std::printf("%-28s %6.3f %4d %9.4f %9.3f %7.2f %6d %10.0f %9.3f %8.2f\n", s.c_str(), f, seed, rho, rec, fit_s,
                    model.last_training().steps, per_s, update_s, lat.empty() ? 0.0 : lat[lat.size() / 2]);
        std::fflush(stdout);
      }
    }
  }
  std::printf("mean spearman %.4f  mean top1%% recall %.3f  over %d runs\n", sum_rho / count, sum_rec / count, count);
} catch (const std::exception& e) {
  std::fprintf(stderr, "transformer_tuning: error: %s\n", e.what());
  return 1;
}
