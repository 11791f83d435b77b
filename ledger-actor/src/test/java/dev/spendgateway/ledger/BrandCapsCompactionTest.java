package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.Compact;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The caps a brand last sent are kept while the brand has cap windows in the books (or an open
 * reservation), and forgotten with its last window: a week of brands that are never seen again must
 * not leave one entry each in the ledger's memory and every snapshot for good. (A snapshot written
 * before then still holds them: SubjectMemoryTest checks verify calls its books the same.)
 */
@ExtendWith({TestKitJUnit5Extension.class, LogCapturingExtension.class})
class BrandCapsCompactionTest {
  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  private final TestClock clock = TestClock.at("2026-11-30T10:00:00Z");
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit;

  @BeforeEach
  void setUp() {
    kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            GlobalBudget.create(IdempotencyWindowTest.settings(1000), clock),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    kit.clear();
  }

  private void reserveAndSettle(String id, String brand) {
    ReserveReply reply =
        kit.<ReserveReply>runCommand(
                r ->
                    new Reserve(
                        id, Lane.APP, brand, 100_000, 5_000_000, 50_000_000, Owner.LEDGER_API, r))
            .reply();
    assertEquals(new Reserved(id, 100_000), reply);
    kit.<LedgerProtocol.CloseReply>runCommand(r -> new Settle(id, 50_000, Owner.LEDGER_API, r));
  }

  private Set<String> brandsRemembered() {
    return kit.getState().brandCapsBySubject().asMap().keySet();
  }

  @Test
  void aBrandIsForgottenWithItsLastCapWindowAndKeptWhileItHasOne() {
    for (int i = 0; i < 200; i++) {
      reserveAndSettle("once-" + i, "brand-once-" + i);
    }
    assertEquals(200, brandsRemembered().size());

    // Two days on: the 30 November day and the November month have ended, past the retention.
    clock.advance(Duration.ofDays(2));
    reserveAndSettle("today-1", "brand-today");
    kit.runCommand(new Compact());
    assertEquals(Set.of("brand-today"), brandsRemembered());

    // Recovery (snapshot + journal, then journal only) folds to the same.
    kit.restart();
    assertEquals(Set.of("brand-today"), brandsRemembered());
    kit.snapshotTestKit().orElseThrow().clearAll();
    kit.restart();
    assertEquals(Set.of("brand-today"), brandsRemembered());
  }
}
