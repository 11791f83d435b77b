package dev.spendgateway.ledger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Runs {@link FixtureJournalV2} from Maven, only on request: {@code mvn -B -q -pl ledger-actor -am
 * test -Dtest=FixtureJournalV2WriterTest -Dsurefire.failIfNoSpecifiedTests=false
 * -Dfixture.write=$PWD/ledger-actor/src/test/resources/fixtures/journal-v2}.
 */
class FixtureJournalV2WriterTest {
  @Test
  @EnabledIfSystemProperty(named = "fixture.write", matches = ".+")
  void writeFixture() throws Exception {
    FixtureJournalV2.main(new String[] {System.getProperty("fixture.write")});
  }
}
