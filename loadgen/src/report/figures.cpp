// Figures with gnuplot: each figure is a <stem>.dat (data) and a <stem>.gp
// (script) written next to each other, then `gnuplot <stem>.gp` draws
// <stem>.png (pngcairo when available, else png). gnuplot output goes to
// <stem>.gp.log. A missing or failing gnuplot is a logged warning only.
#include <fcntl.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

#include "report_internal.h"

extern char** environ;

namespace bp::loadgen::internal {
namespace {

// A double-quoted gnuplot string literal.
std::string GpString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Terminal(int width, int height) {
  const std::string size = " size " + std::to_string(width) + "," + std::to_string(height);
  return "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n  set terminal pngcairo" + size +
         " font \"sans,10\"\n} else {\n  set terminal png" + size + "\n}\n";
}

// Characters of the longest row label (for the left margin).
size_t LabelWidth(const std::vector<std::string>& labels) {
  size_t w = 0;
  for (const std::string& l : labels) w = std::max(w, l.size());
  return w;
}

const char* kClassColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"};

// The classes k with a metric "class.P<k>.<metric>" in any configuration;
// *repeats becomes the most repeats any configuration ran.
std::set<int> ClassesWith(const WorkloadSummary& summary, const std::string& metric,
                          int* repeats) {
  std::set<int> classes;
  for (const ConfigurationSummary& c : summary.configurations) {
    *repeats = std::max(*repeats, c.repeats);
    for (const auto& [name, ci] : c.metrics) {
      int k = 0;
      if (std::sscanf(name.c_str(), "class.P%d.", &k) == 1 &&
          name == "class.P" + std::to_string(k) + "." + metric) {
        classes.insert(k);
      }
    }
  }
  return classes;
}

}  // namespace

bool RunGnuplot(const std::filesystem::path& script, const ReportOptions& options) {
  const std::string log = script.string() + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string prog = options.gnuplot, arg = script.string();
  char* argv[] = {prog.data(), arg.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, prog.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    spdlog::warn("figures: cannot run {} ({}); {} left undrawn (install gnuplot-nox)", prog,
                 std::strerror(rc), script.string());
    return false;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    spdlog::warn("figures: {} failed on {}; see {}", prog, script.string(), log);
    return false;
  }
  return true;
}

Status HeatmapFigure(const std::filesystem::path& dir, const std::string& stem,
                     const ServiceHeatmap& h, const std::string& title,
                     const ReportOptions& options) {
  const size_t rows = h.tenants.size();
  const size_t buckets = rows > 0 ? h.ok_rps[0].size() : 0;
  double max_rps = 0;
  std::ostringstream dat, starved;
  dat << "# time_s row ok_rps (row 0 = bottom)\n";
  starved << "# time_s row half_width half_height (starved cells)\n";
  bool any_starved = false;
  for (size_t row = 0; row < rows; ++row) {
    const size_t y = rows - 1 - row;  // first tenant (P1) on top
    for (size_t b = 0; b < buckets; ++b) {
      const double x = (static_cast<double>(b) + 0.5) * h.bucket_s;
      dat << Fixed(x, 4) << ' ' << y << ' ' << Fixed(h.ok_rps[row][b], 4) << '\n';
      max_rps = std::max(max_rps, h.ok_rps[row][b]);
      if (h.starved[row][b]) {
        starved << Fixed(x, 4) << ' ' << y << ' ' << Fixed(h.bucket_s / 2, 4) << " 0.5\n";
        any_starved = true;
      }
    }
    dat << '\n';
  }
  const std::filesystem::path dat_path = dir / (stem + ".dat"), gp_path = dir / (stem + ".gp");
  const std::filesystem::path starved_path = dir / (stem + "_starved.dat");
  if (Status s = WriteTextFile(dat_path, dat.str()); !s.ok()) return s;
  if (Status s = WriteTextFile(starved_path, starved.str()); !s.ok()) return s;

  std::ostringstream gp;
  gp << Terminal(1000, 160 + 45 * static_cast<int>(rows)) << "set output "
     << GpString((dir / (stem + ".png")).string()) << "\n"
     << "set title " << GpString(title) << " noenhanced\n"
     << "set xlabel \"time (s)\"\nset ylabel \"tenant, priority\" offset -2,0\n"
     << "set cblabel \"OK requests / s\"\n"
     << "set palette defined (0 \"#f7fbff\", 0.4 \"#6baed6\", 1 \"#08306b\")\n"
     << "set cbrange [0:" << Fixed(std::max(max_rps, 1.0), 3) << "]\n"
     << "set xrange [0:" << Fixed(static_cast<double>(buckets) * h.bucket_s, 4) << "]\n"
     << "set yrange [-0.5:" << Fixed(static_cast<double>(rows) - 0.5, 1) << "]\n"
     << "set key above noenhanced\nset tics out nomirror\n"
     << "set lmargin " << LabelWidth(h.tenants) + 8 << "\nset ytics (";
  for (size_t row = 0; row < rows; ++row) {
    gp << (row ? ", " : "") << GpString(h.tenants[row]) << ' ' << rows - 1 - row;
  }
  gp << ") noenhanced\n"
     << "plot " << GpString(dat_path.string());
  if (rows >= 2 && buckets >= 2) {
    gp << " using 1:2:3 with image notitle";
  } else {
    // gnuplot's image needs a 2 x 2 grid at least; one tenant (overload,
    // uncongested) or one bucket is drawn as filled boxes of the same size.
    gp << " using 1:2:(" << Fixed(h.bucket_s / 2, 4)
       << "):(0.5):3 with boxxyerror fill solid 1.0 noborder lc palette notitle";
  }
  if (any_starved) {
    gp << ", \\\n     " << GpString(starved_path.string())
       << " using 1:2:3:4 with boxxyerror fill pattern 4 transparent lc rgb \"#d62728\""
          " title \"starved (demand > 0, ok = 0)\"";
  }
  gp << "\n";
  if (Status s = WriteTextFile(gp_path, gp.str()); !s.ok()) return s;
  RunGnuplot(gp_path, options);
  return Status::Ok();
}

Status ThroughputFigure(const std::filesystem::path& dir, const std::string& stem,
                        const WorkloadSummary& summary, const ReportOptions& options) {
  int repeats = 0;
  const std::set<int> classes = ClassesWith(summary, "ok_rps", &repeats);
  if (classes.empty() || summary.configurations.empty()) return Status::Ok();
  std::ostringstream dat;
  double top = 1;  // highest bar + CI, for headroom above the value labels
  dat << "# configuration then per class: mean_ok_rps ci95\n";
  for (const ConfigurationSummary& c : summary.configurations) {
    dat << GpString(c.configuration);
    for (int k : classes) {
      const MeanCi* m = c.Find("class.P" + std::to_string(k) + ".ok_rps");
      dat << ' ' << Fixed(m ? m->mean : 0, 4) << ' ' << Fixed(m ? m->half_width : 0, 4);
      if (m) top = std::max(top, m->mean + m->half_width);
    }
    dat << '\n';
  }
  const std::filesystem::path dat_path = dir / (stem + ".dat"), gp_path = dir / (stem + ".gp");
  if (Status s = WriteTextFile(dat_path, dat.str()); !s.ok()) return s;

  const auto n = static_cast<double>(classes.size());
  const double box = 1.0 / (n + 1.0);  // clustered histogram, gap 1
  std::ostringstream gp;
  gp << Terminal(900, 520) << "set output " << GpString((dir / (stem + ".png")).string()) << "\n"
     << "set title "
     // One repeat has no interval (MeanCi95's half width is 0): no "CI" then.
     << GpString(summary.workload + ": OK throughput per class (contention window, " +
                 (repeats == 1 ? std::string("1 repeat, no interval)")
                               : "95 % CI, " + std::to_string(repeats) + " repeats)"))
     << " noenhanced\n"
     << "set style data histograms\nset style histogram errorbars gap 1 lw 1\n"
     << "set style fill solid 0.85 border -1\nset boxwidth 0.95\n"
     << "set ylabel \"OK req/s\"\nset yrange [0:" << Fixed(top * 1.15, 2)
     << "]\nset key top right\n"
     << "set tics out nomirror\nset xtics noenhanced\n"
     << "plot ";
  int i = 0;
  for (int k : classes) {
    const int col = 2 + 2 * i;
    gp << (i ? ", \\\n     " : "") << GpString(dat_path.string()) << " using " << col << ':'
       << col + 1 << (i == 0 ? ":xtic(1)" : "") << " title \"P" << k << "\" lc rgb \""
       << kClassColors[static_cast<size_t>(i) % std::size(kClassColors)] << "\"";
    ++i;
  }
  i = 0;
  for ([[maybe_unused]] int k : classes) {
    const int col = 2 + 2 * i;
    const double offset = (static_cast<double>(i) - (n - 1) / 2) * box;
    gp << ", \\\n     " << GpString(dat_path.string()) << " using ($0" << (offset >= 0 ? "+" : "")
       << Fixed(offset, 4) << "):($" << col << "+$" << col + 1 << "):(sprintf(\"%.1f\", $" << col
       << ")) with labels offset 0,0.7 font \",9\" notitle";
    ++i;
  }
  gp << "\n";
  if (Status s = WriteTextFile(gp_path, gp.str()); !s.ok()) return s;
  RunGnuplot(gp_path, options);
  return Status::Ok();
}

Status TtftFigure(const std::filesystem::path& dir, const std::string& stem,
                  const WorkloadSummary& summary, const ReportOptions& options) {
  int repeats = 0;
  const std::set<int> classes = ClassesWith(summary, "ttft_p95_ms", &repeats);
  if (classes.empty()) return Status::Ok();  // no streamed answer in any run
  static const char* kPercentiles[] = {"p50", "p95", "p99"};
  std::ostringstream dat;
  // The y axis is logarithmic: a baseline's tail (litellm's 60 s retry-after)
  // is 100 times a gated class's median. It spans the powers of ten around
  // the lowest and the highest value, with room above for the labels.
  double low = 0, top = 1;
  dat << "# configuration then per class: ttft_p50_ms ttft_p95_ms ttft_p99_ms "
         "(paper ms from the activity's first schedule, mean over repeats; - none streamed)\n";
  for (const ConfigurationSummary& c : summary.configurations) {
    dat << GpString(c.configuration);
    for (int k : classes) {
      for (const char* p : kPercentiles) {
        const MeanCi* m = c.Find("class.P" + std::to_string(k) + ".ttft_" + p + "_ms");
        dat << ' ' << (m ? Fixed(m->mean, 1) : std::string("-"));
        if (m && m->mean > 0) low = low > 0 ? std::min(low, m->mean) : m->mean;
        if (m) top = std::max(top, m->mean);
      }
    }
    dat << '\n';
  }
  const std::filesystem::path dat_path = dir / (stem + ".dat"), gp_path = dir / (stem + ".gp");
  if (Status s = WriteTextFile(dat_path, dat.str()); !s.ok()) return s;

  const auto n = static_cast<double>(classes.size());
  const double box = 1.0 / (n + 1.0);  // clustered histogram, gap 1
  std::ostringstream gp;
  gp << Terminal(900, 520) << "set output " << GpString((dir / (stem + ".png")).string()) << "\n"
     << "set title "
     << GpString(summary.workload +
                 ": time to first token per class, streamed calls (bar p95, whisker p50 to "
                 "p99; " +
                 (repeats == 1 ? std::string("1 repeat)")
                               : "mean of " + std::to_string(repeats) + " repeats)"))
     << " noenhanced\n"
     << "set datafile missing \"-\"\n"
     << "set style data histograms\nset style histogram errorbars gap 1 lw 1\n"
     << "set style fill solid 0.85 border -1\nset boxwidth 0.95\n"
     << "set ylabel \"ms from schedule to first token (paper time, log scale)\"\n"
     << "set logscale y\nset yrange ["
     << Fixed(std::pow(10, std::floor(std::log10(low > 0 ? low : 1))), 3) << ':'
     << Fixed(std::pow(10, std::ceil(std::log10(top * 2))), 0)
     << "]\nset format y \"%.0f\"\nset key top left\n"
     << "set tics out nomirror\nset xtics noenhanced\n"
     << "plot ";
  int i = 0;
  for (int k : classes) {
    const int col = 2 + 3 * i;  // p50, p95, p99 of class k
    gp << (i ? ", \\\n     " : "") << GpString(dat_path.string()) << " using " << col + 1 << ':'
       << col << ':' << col + 2 << (i == 0 ? ":xtic(1)" : "") << " title \"P" << k << "\" lc rgb \""
       << kClassColors[static_cast<size_t>(i) % std::size(kClassColors)] << "\"";
    ++i;
  }
  i = 0;
  for ([[maybe_unused]] int k : classes) {
    const int col = 2 + 3 * i;
    const double offset = (static_cast<double>(i) - (n - 1) / 2) * box;
    gp << ", \\\n     " << GpString(dat_path.string()) << " using ($0" << (offset >= 0 ? "+" : "")
       << Fixed(offset, 4) << "):" << col + 2 << ":(sprintf(\"%.0f\", $" << col + 1
       << ")) with labels offset 0,0.7 font \",9\" notitle";
    ++i;
  }
  gp << "\n";
  if (Status s = WriteTextFile(gp_path, gp.str()); !s.ok()) return s;
  RunGnuplot(gp_path, options);
  return Status::Ok();
}

}  // namespace bp::loadgen::internal
