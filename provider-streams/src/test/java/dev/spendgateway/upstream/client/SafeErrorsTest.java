package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.stream.Stream;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLProtocolException;
import org.apache.pekko.stream.StreamTcpException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SafeErrorsTest {

  @Test
  void aRefusedConnectWasNeverSentAndSettlesAtZero() {
    // How Pekko reports a refused connect: the JDK's ConnectException as the cause.
    Throwable refused =
        new StreamTcpException("Tcp command failed")
            .initCause(new ConnectException("Connection refused"));
    String errorClass = SafeErrors.classify(new CompletionException(refused));
    assertEquals(SafeErrors.CONNECT_FAILED, errorClass);
    assertFalse(new UpstreamResult.ConnectionFailed(errorClass).mayHaveReachedProvider());
  }

  @Test
  void aConnectionLostAfterItOpenedMayHaveBeenBilledAndKeepsTheWorstCase() {
    Throwable reset =
        new StreamTcpException("The connection closed with error: Connection reset by peer");
    String errorClass = SafeErrors.classify(reset);
    assertEquals(SafeErrors.CONNECTION_LOST, errorClass);
    assertTrue(new UpstreamResult.ConnectionFailed(errorClass).mayHaveReachedProvider());
  }

  @Test
  void theClassNeverCarriesTheExceptionMessage() {
    Throwable leaky = new IllegalStateException("https://api.example?key=sk-secret");
    assertEquals("error:IllegalStateException", SafeErrors.classify(leaky));
  }

  /**
   * One row per failure: its class, whether the provider may have billed it, whether it is sent
   * again.
   */
  static Stream<Arguments> failures() {
    return Stream.of(
        Arguments.of(
            "a refused connect",
            new StreamTcpException("Tcp command failed").initCause(new ConnectException("refused")),
            SafeErrors.CONNECT_FAILED,
            false,
            true),
        Arguments.of(
            "a failed TLS handshake",
            new SSLHandshakeException("PKIX path building failed"),
            SafeErrors.TLS_HANDSHAKE_FAILED,
            false,
            true),
        Arguments.of(
            "a failed TLS handshake inside a TCP error",
            new StreamTcpException("tls").initCause(new SSLHandshakeException("bad cert")),
            SafeErrors.TLS_HANDSHAKE_FAILED,
            false,
            true),
        Arguments.of(
            "a TLS error after the handshake",
            new SSLException("Tag mismatch"),
            SafeErrors.TLS_FAILED,
            true,
            false),
        Arguments.of(
            "a TLS protocol error mid-answer",
            new SSLProtocolException("unexpected record"),
            SafeErrors.TLS_FAILED,
            true,
            false),
        Arguments.of(
            "a call past its max duration",
            new MaxCallDurationExceeded(Duration.ofMinutes(13)),
            SafeErrors.MAX_CALL_DURATION,
            true,
            false),
        Arguments.of(
            "a connection reset once open",
            new StreamTcpException("Connection reset by peer"),
            SafeErrors.CONNECTION_LOST,
            true,
            false));
  }

  @ParameterizedTest(name = "{0} is {2}: may have been billed {3}, sent again {4}")
  @MethodSource("failures")
  void onlyWhatProvablyNeverLeftIsFreeAndSentAgain(
      String what, Throwable failure, String errorClass, boolean mayHaveReached, boolean retried) {
    assertEquals(errorClass, SafeErrors.classify(new CompletionException(failure)));
    UpstreamResult.ConnectionFailed failed = new UpstreamResult.ConnectionFailed(errorClass);
    assertEquals(mayHaveReached, failed.mayHaveReachedProvider());
    assertEquals(retried, failed.isRetryableNeverSent());
  }
}
