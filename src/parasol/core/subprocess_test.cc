#include "parasol/core/subprocess.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol {
namespace {

using namespace std::chrono_literals;

std::string LogPath(const std::string& name) { return TestPath("subprocess_" + name + ".log"); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Subprocess, ReportsTheExitStatusAndAppendsOutputToTheLog) {
  const std::string log = LogPath("exit");
  std::filesystem::remove(log);
  {
    Subprocess p({"sh", "-c", "echo out; echo err >&2; echo $PARASOL_SUBPROCESS_TEST; exit 3"}, log,
                 {"PARASOL_SUBPROCESS_TEST=added"});
    EXPECT_EQ(p.Wait(Deadline::After(10s)), 3);
    EXPECT_EQ(p.Poll(), 3);  // stays reaped
  }
  Subprocess again({"sh", "-c", "echo second"}, log);
  EXPECT_EQ(again.Wait(Deadline::After(10s)), 0);
  EXPECT_EQ(Slurp(log), "out\nerr\nadded\nsecond\n");
}

// A launcher's children are signalled with it: `sh` here stands for mpirun, `sleep` for a rank.
TEST(Subprocess, SignalReachesTheWholeGroupAndWaitHonoursItsDeadline) {
  const std::string marker = LogPath("marker");
  std::filesystem::remove(marker);
  Subprocess p({"sh", "-c", "sleep 30 & echo $! > " + marker + "; wait"}, LogPath("group"));
  EXPECT_FALSE(p.Wait(Deadline::After(300ms)).has_value());
  // The grandchild's pid, once the shell has written it.
  pid_t sleeper = 0;
  for (int i = 0; i < 1000 && sleeper == 0; ++i) {
    std::ifstream(marker) >> sleeper;
    if (sleeper == 0) std::this_thread::sleep_for(10ms);
  }
  ASSERT_GT(sleeper, 0) << "the shell never started its child";
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(Deadline::After(10s)), 128 + SIGTERM);
  // The grandchild got the signal too: gone, or a zombie waiting for whoever inherited it.
  auto alive = [&] {
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string pid, comm, state;
    return stat >> pid >> comm >> state && state != "Z";
  };
  for (int i = 0; i < 1000 && alive(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(alive()) << "sleep (pid " << sleeper << ") outlived the signal to its group";
}

TEST(Subprocess, AProgramThatCannotStartIsAnError) {
  try {
    Subprocess p({"/nonexistent/parasol-no-such-program"}, LogPath("missing"));
    // posix_spawnp may report exec failure as exit status 127 of the child instead.
    EXPECT_EQ(p.Wait(Deadline::After(10s)), 127);
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start /nonexistent/parasol-no-such-program"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace parasol
