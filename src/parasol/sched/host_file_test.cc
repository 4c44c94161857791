#include "parasol/sched/host_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "parasol/core/error.h"
#include "parasol/core/test_dir.h"

namespace parasol::sched {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(Hosts, ReadsAnMpiHostfile) {
  const fs::path p = TestPath("hosts.txt");
  std::ofstream(p) << "# the lab's machines\nnode-1 slots=4\n\n  node-2   slots=4  # spare\n";
  const std::vector<Host> hosts = ReadHostFile(p.string());
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[1].name, "node-2");
  EXPECT_EQ(hosts[1].slots, 4);
  std::ofstream(p) << "solo\n";
  EXPECT_EQ(ReadHostFile(p.string()).at(0).slots, 1);  // as OpenMPI: one slot when not given
  std::ofstream(p) << "a,b slots=1\n";
  EXPECT_THAT([&] { ReadHostFile(p.string()); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr(":1: host 'a,b': use letters")));
  std::ofstream(p) << "# nothing\n";
  EXPECT_THAT([&] { ReadHostFile(p.string()); },
              ::testing::ThrowsMessage<ParseError>(HasSubstr(":1: no hosts")));
  fs::remove(p);
}

TEST(Hosts, RefusesHostsTwiceUnequalSlotsAndAMissingFile) {
  const fs::path p = TestPath("bad_hosts.txt");
  auto error = [&](const std::string& text) {
    std::ofstream(p) << text;
    try {
      ReadHostFile(p.string());
    } catch (const ParseError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error("a slots=2\nb slots=2\na slots=2\n"), HasSubstr(":3: host a twice"));
  EXPECT_THAT(error("a slots=2\nb slots=4\n"), HasSubstr(":2: 4 slots; a has 2"));
  EXPECT_THAT(error("a slots=0\n"), HasSubstr(":1: slots 0 is not in [1, 1000000]"));
  EXPECT_THAT(error("a cpus=2\n"), HasSubstr(":1: 'cpus=2': expected slots=N"));
  fs::remove(p);
  EXPECT_THROW(ReadHostFile(p.string()), IoError);
}

}  // namespace
}  // namespace parasol::sched
