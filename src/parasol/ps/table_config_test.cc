// The table's configuration on its own: consistency specs as users write them, and tables that
// cannot work refused before any shard holds them, naming the table and the field.
#include "parasol/ps/table_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "parasol/core/error.h"

namespace parasol::ps {
namespace {

using ::testing::HasSubstr;

TEST(ConsistencySpec, ParsesEveryModelAndRefusesTheRest) {
  auto s = ParseConsistencySpec("ssp:3");
  EXPECT_EQ(s.model, Consistency::kSsp);
  EXPECT_EQ(s.staleness, 3u);
  auto v = ParseConsistencySpec("vap:2:0.5");
  EXPECT_EQ(v.model, Consistency::kVap);
  EXPECT_EQ(v.staleness, 2u);
  EXPECT_EQ(v.vap_threshold, 0.5);
  EXPECT_EQ(ParseConsistencySpec("bsp").model, Consistency::kBsp);
  EXPECT_EQ(ParseConsistencySpec("essp:10").ToString(), "essp:10");
  EXPECT_EQ(v.ToString(), "vap:2:0.5");
  for (const char* bad : {"ssp", "bsp:1", "ssp:x", "vap:2", "vap:2:0", "lazy:1", "", "ssp:3:1", "essp:-1",
                          "vap:3:inf", "vap:3:nan", "vap:3:0x1p3"}) {
    EXPECT_THROW(ParseConsistencySpec(bad), InvalidArgumentError) << bad;
  }
}

TEST(TableConfig, ReadStalenessFollowsTheModel) {
  EXPECT_EQ((TableConfig{.consistency = Consistency::kBsp}).ReadStaleness(), 0u);
  EXPECT_EQ((TableConfig{.consistency = Consistency::kSsp, .staleness = 3}).ReadStaleness(), 3u);
  EXPECT_EQ((TableConfig{.consistency = Consistency::kAsp}).ReadStaleness(),
            std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE((TableConfig{.consistency = Consistency::kEssp, .staleness = 1}).Pushed());
  EXPECT_FALSE((TableConfig{.consistency = Consistency::kSsp, .staleness = 1}).Pushed());
}

TEST(TableConfig, TablesThatCannotWorkAreRefusedNamingTheField) {
  const TableConfig good{
      .id = 3, .width = 16, .num_rows = 100, .consistency = Consistency::kSsp, .staleness = 2};
  EXPECT_NO_THROW(good.Validate());
  auto error = [](const TableConfig& c) {
    try {
      c.Validate();
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  TableConfig c = good;
  c.width = 0;
  EXPECT_THAT(error(c), HasSubstr("table 3: dense rows need a width"));
  c = good;
  c.num_rows = 0;
  EXPECT_THAT(error(c), HasSubstr("num_rows"));
  c = good;
  c.consistency = Consistency::kBsp;
  EXPECT_THAT(error(c), HasSubstr("bsp reads are never stale"));
  c = good;
  c.consistency = Consistency::kVap;
  EXPECT_THAT(error(c), HasSubstr("vap needs a positive vap_threshold"));
  c = good;
  c.vap_threshold = 0.5;
  EXPECT_THAT(error(c), HasSubstr("vap_threshold applies to vap tables only"));
  c = good;
  c.id = ~uint32_t{0};
  EXPECT_THAT(error(c), HasSubstr("reserved"));
  c = good;
  c.one_sided_reads = true;
  EXPECT_THAT(error(c), HasSubstr("one-sided reads need dense rows and range partitioning"));
  c.partitioning = Partitioning::kRange;
  EXPECT_NO_THROW(c.Validate());
  c.kind = RowKind::kSparse;
  EXPECT_THAT(error(c), HasSubstr("one-sided reads need dense rows"));
  c.kind = RowKind::kDense;
  c.consistency = Consistency::kEssp;
  EXPECT_THAT(error(c), HasSubstr("one-sided reads need bsp or ssp"));
  c.consistency = Consistency::kSsp;
  c.one_update_per_clock = true;
  EXPECT_THAT(error(c), HasSubstr("one-sided reads and one_update_per_clock"));
}

TEST(TableConfig, TheFingerprintTellsTablesApart) {
  const TableConfig a{.id = 1, .width = 8, .num_rows = 10};
  TableConfig b = a;
  EXPECT_EQ(a.Fingerprint(), b.Fingerprint());
  b.width = 9;
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
  b = a;
  b.dtype = DType::kFloat64;
  EXPECT_NE(a.Fingerprint(), b.Fingerprint());
}

}  // namespace
}  // namespace parasol::ps
