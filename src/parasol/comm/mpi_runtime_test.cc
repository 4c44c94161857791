#include "parasol/comm/mpi_runtime.h"

#include <stdlib.h>

#include <cstring>

#include <gtest/gtest.h>

#include "parasol/comm/transport.h"

namespace parasol::comm {
namespace {

// Runs with no launcher's variables in the environment (ctest's), and restores any it sets.
class LauncherEnvironment {
 public:
  explicit LauncherEnvironment(const char* var) : var_(var) { setenv(var_, "3", 1); }
  ~LauncherEnvironment() { unsetenv(var_); }

 private:
  const char* var_;
};

TEST(MpiRuntime, ALauncherIsKnownByItsEnvironment) {
  ASSERT_FALSE(StartedByLauncher()) << "run the test outside mpirun";
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    LauncherEnvironment launched(var);
    EXPECT_TRUE(StartedByLauncher()) << var;
    ASSERT_NE(LauncherRank(), nullptr) << var;
    EXPECT_STREQ(LauncherRank(), "3") << var;
  }
  EXPECT_FALSE(StartedByLauncher());
  EXPECT_EQ(LauncherRank(), nullptr);
}

// Alone, without a launcher: one rank and no MPI, over a transport that carries messages to itself.
TEST(MpiRuntime, AloneItIsOneRankWithoutMpi) {
  ASSERT_FALSE(StartedByLauncher()) << "run the test outside mpirun";
  MpiRuntime mpi(nullptr, nullptr, MpiStart::kUnderLauncher);
  EXPECT_FALSE(mpi.started());
  EXPECT_EQ(mpi.rank(), 0);
  EXPECT_EQ(mpi.size(), 1);
  std::unique_ptr<Transport> t = mpi.CreateWorldTransport();
  ASSERT_EQ(t->size(), 1);
  const char hello[] = "hello";
  char got[sizeof(hello)] = {};
  Request recv = t->Irecv(0, 7, got, sizeof(got));
  Request send = t->Isend(0, 7, hello, sizeof(hello));
  while (!t->Test(recv)) {
  }
  while (!t->Test(send)) {
  }
  EXPECT_STREQ(got, hello);
}

}  // namespace
}  // namespace parasol::comm
