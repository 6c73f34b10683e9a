#pragma once
// `gpuforecast eval --selective`: the calibrated selective predictor on held-out data (coverage,
// width, deferral acceptance and risk, AURC, bin calibration) and its two SVG plots.
// The eval command parses the options into SelectiveEvalArgs and calls run_selective_eval.
#include <cstdint>
#include <string>
#include <vector>

namespace gpuforecast::cli {

struct SelectiveEvalArgs {
  std::string model;                 // trained model file (a calibration section is optional)
  std::vector<std::string> data;     // held-out measurements (not used to train the model)
  // Fraction of the data used to calibrate, the rest is the test set. 0: evaluate the model's own
  // calibration section on all the data.
  double calibration_fraction = 0.5;
  double alpha = 0.1;                // interval miscoverage and deferral risk (when calibrating)
  double delta = 0.1;                // deferral guarantee failure probability (when calibrating)
  std::size_t seeds = 1;             // random calibration/test splits, seeds seed, seed+1, ...
  std::uint64_t seed = 0;
  std::string plots;                 // directory for reliability.svg and risk_coverage.svg ("" = none)
  bool json = false;                 // JSON instead of a table
  // JSON Lines (docs/events.md): a begin line, a decision line per test point with its measured
  // time and loss, an end line; with several seeds one file each, run.seedS.jsonl ("" = none).
  std::string events;
};

// Prints a table (or JSON) to stdout; throws gpuforecast errors on bad input.
void run_selective_eval(const SelectiveEvalArgs& args);

}  // namespace gpuforecast::cli
