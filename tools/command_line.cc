#include "tools/command_line.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "parasol/comm/mpi_runtime.h"
#include "parasol/core/error.h"

namespace parasol::tools {
namespace {

constexpr std::chrono::seconds kCauseEndsTheJob(10);

int ExitCode(const Error& e) {
  switch (e.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kIo: return 2;
    case ErrorCode::kDiverged: return 3;
    default: return 1;
  }
}

// Under mpirun every rank parses the same command line: one of them reports a usage error.
bool ReportsUsageErrors() {
  const char* rank = comm::LauncherRank();
  return rank == nullptr || std::string_view(rank) == "0";
}

// A usage error: one line (and where to look for the options), exit code 2. The ranks that stay
// silent wait before they exit: mpirun ends the whole job when the first rank fails, and a silent
// rank that failed first would kill the reporting one before it had written its line (seen under
// ASan, whose start-up is slow). mpirun ends the waiting ranks as soon as the reporting one exits.
int UsageError(const CLI::App& app, std::string_view message) {
  if (!ReportsUsageErrors()) {
    std::this_thread::sleep_for(std::chrono::seconds(10));
    return 2;
  }
  const CLI::App* sub = app.get_subcommands().empty() ? nullptr : app.get_subcommands().front();
  std::cerr << "parasol" << (sub ? " " + sub->get_name() : "") << ": " << message << " (see 'parasol"
            << (sub ? " " + sub->get_name() : "") << " --help')" << std::endl;
  return 2;
}

// Edits (insertions, deletions, substitutions) that turn a into b.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// For an option the command does not have: " (did you mean --topics?)" when one of its options is
// a near miss (a third of the name's letters or fewer changed), else nothing.
std::string Suggestion(const CLI::App& app, const CLI::ParseError& e) {
  const auto* extras = dynamic_cast<const CLI::ExtrasError*>(&e);
  if (extras == nullptr || app.get_subcommands().empty()) return "";
  const CLI::App* sub = app.get_subcommands().front();
  std::string out;
  for (const std::string& arg : sub->remaining()) {
    if (!arg.starts_with("--")) continue;
    const std::string name = arg.substr(2, arg.find('=') == std::string::npos ? arg.npos : arg.find('=') - 2);
    std::string best;
    size_t best_distance = name.size() / 3 + 1;
    for (const CLI::Option* opt : sub->get_options()) {
      for (const std::string& candidate : opt->get_lnames()) {
        const size_t d = EditDistance(name, candidate);
        if (d < best_distance) best_distance = d, best = candidate;
      }
    }
    if (!best.empty()) out += fmt::format(" (did you mean --{}?)", best);
  }
  return out;
}

// Runs a parsed and validated command; errors end this rank (and under mpirun the job).
int Run(Command& command, int argc, char** argv) {
  std::unique_ptr<comm::MpiRuntime> mpi;
  const std::string name = command.app()->get_name();
  try {
    if (command.NeedsMpi()) mpi = std::make_unique<comm::MpiRuntime>(&argc, &argv, command.MpiStartAlone());
    return command.Run(mpi.get());
  } catch (const Error& e) {
    std::cerr << "parasol " << name << ": " << e.what() << std::endl;
    // Other ranks may be waiting on this one: end the whole job rather than hang in finalize.
    if (mpi && mpi->size() > 1) {
      // Told of another rank's failure, this rank leaves ending the job to that rank for a while,
      // so the job's exit code is the cause's (3 for a diverged run, 2 for bad input), not 1.
      if (e.code() == ErrorCode::kAborted) std::this_thread::sleep_for(kCauseEndsTheJob);
      mpi->Abort(ExitCode(e));
    }
    return ExitCode(e);
  } catch (const std::filesystem::filesystem_error& e) {
    // A file or folder the system refused (permissions, a full disk): the user's to fix, as an IoError.
    std::cerr << "parasol " << name << ": " << e.path1().string() << ": " << e.code().message() << std::endl;
    if (mpi && mpi->size() > 1) mpi->Abort(2);
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "parasol " << name << ": internal error: " << e.what() << std::endl;
    if (mpi && mpi->size() > 1) mpi->Abort(1);
    return 1;
  }
}

}  // namespace

// glibc's defaults hand large freed blocks back to the kernel (mmap above the threshold, heap
// trimming), and every step then faults each page in again and zeroes it: 60% of a VGG step on
// this machine. Freed memory is kept for reuse instead.
void KeepFreedMemory() {
  // Older glibc caps the threshold at 32 MiB and refuses more.
  if (mallopt(M_MMAP_THRESHOLD, 1 << 30) == 0) mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

bool StdoutIsATerminal() {
  // mpirun hands its ranks a pseudo-terminal even when its own output goes to a file.
  return isatty(STDOUT_FILENO) != 0 && !comm::StartedByLauncher();
}

void ConfigureApp(CLI::App& app) {
  app.description("parasol: a platform for distributed machine learning");
  app.set_version_flag("--version", std::string("parasol ") + PARASOL_VERSION);
  app.require_subcommand(1);
}

int RunCommandLine(CLI::App& app, std::vector<std::unique_ptr<Command>>& commands, int argc, char** argv) {
  // A redirected or piped stdout (a log file, mpirun's forwarding, tail -f) gets each line as it
  // is written, and keeps every line written before an interrupt: the C library would otherwise
  // hold up to a block of it, lost with the process. std::cout writes through stdout's buffer.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
      std::string names;
      const auto all = std::as_const(app).get_subcommands([](const CLI::App*) { return true; });
      for (const CLI::App* sub : all) names += (names.empty() ? "" : ", ") + sub->get_name();
      return UsageError(app, fmt::format("unknown command '{}' (commands: {})", argv[1], names));
    }
    if (app.get_subcommands().empty()) return UsageError(app, "a command is required");
    return UsageError(app, e.what() + Suggestion(app, e));
  }
  for (auto& command : commands) {
    if (!command->app()->parsed()) continue;
    try {
      command->Validate();
    } catch (const Error& e) {
      return UsageError(app, e.what());
    }
    // The README's test: every command line it shows still parses and passes its checks.
    if (std::getenv("PARASOL_CHECK_ONLY") != nullptr) return 0;
    return Run(*command, argc, argv);
  }
  return 1;
}

}  // namespace parasol::tools
