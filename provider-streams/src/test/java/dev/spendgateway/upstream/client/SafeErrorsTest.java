package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.apache.pekko.stream.StreamTcpException;
import org.junit.jupiter.api.Test;

class SafeErrorsTest {

  @Test
  void aRefusedConnectWasNeverSentAndSettlesAtZero() {
    // How Pekko reports a refused connect: the JDK's ConnectException as the cause.
    Throwable refused = new StreamTcpException("Tcp command failed").initCause(new ConnectException("Connection refused"));
    String errorClass = SafeErrors.classify(new CompletionException(refused));
    assertEquals(SafeErrors.CONNECT_FAILED, errorClass);
    assertFalse(new UpstreamResult.ConnectionFailed(errorClass).mayHaveReachedProvider());
  }

  @Test
  void aConnectionLostAfterItOpenedMayHaveBeenBilledAndKeepsTheWorstCase() {
    Throwable reset = new StreamTcpException("The connection closed with error: Connection reset by peer");
    String errorClass = SafeErrors.classify(reset);
    assertEquals(SafeErrors.CONNECTION_LOST, errorClass);
    assertTrue(new UpstreamResult.ConnectionFailed(errorClass).mayHaveReachedProvider());
  }

  @Test
  void theClassNeverCarriesTheExceptionMessage() {
    Throwable leaky = new IllegalStateException("https://api.example?key=sk-secret");
    assertEquals("error:IllegalStateException", SafeErrors.classify(leaky));
  }
}
