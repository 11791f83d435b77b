package dev.spendgateway.edge.ops;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The operations screen: {@code GET /ops} serves one self-contained HTML page (its script and
 * drawing inline, nothing fetched from elsewhere) and {@code GET /ops/data} the numbers it shows
 * ({@link OpsData}).
 *
 * <p>The page holds no secret, so it needs no token: it reads the gateway token from the URL
 * fragment ({@code #token=…}, which browsers never send to a server) or asks for it, keeps it in
 * the tab's {@code sessionStorage}, removes the fragment from the address bar, and sends it as
 * {@code x-api-key} to {@code /ops/data}, which is behind the token like the rest of the API. So
 * the token never appears in a URL the server sees, in its access log, or in a referrer.
 */
public final class OpsRoutes {
  private static final String PAGE_RESOURCE = "/ops/ops.html";

  /**
   * The page may run only its own inline script and talk only to this gateway; no frame may embed
   * it (an operator's token is typed into it).
   */
  private static final List<HttpHeader> PAGE_HEADERS =
      List.of(
          RawHeader.create(
              "content-security-policy",
              "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self';"
                  + " img-src 'self' data:; frame-ancestors 'none'; form-action 'none'; base-uri 'none'"),
          RawHeader.create("cache-control", "no-store"),
          RawHeader.create("referrer-policy", "no-referrer"),
          RawHeader.create("x-content-type-options", "nosniff"));

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Route page;
  private final Route data;

  public OpsRoutes(OpsData opsData) {
    HttpResponse pageResponse =
        HttpResponse.create()
            .withStatus(StatusCodes.OK)
            .addHeaders(PAGE_HEADERS)
            .withEntity(HttpEntities.create(ContentTypes.TEXT_HTML_UTF8, readPage()));
    // Built once: the directives' suppliers run on every request.
    Route pageGet = get(() -> complete(pageResponse));
    this.page = path("ops", () -> pageGet);
    Route dataGet =
        get(
            () ->
                completeWithFuture(
                    opsData
                        .read()
                        .thenApply(
                            json ->
                                HttpResponse.create()
                                    .withStatus(StatusCodes.OK)
                                    .addHeader(RawHeader.create("cache-control", "no-store"))
                                    .withEntity(
                                        HttpEntities.create(
                                            ContentTypes.APPLICATION_JSON, toBytes(json))))));
    this.data = path(segment("ops").slash("data"), () -> dataGet);
  }

  /** {@code GET /ops}: no token (the page holds none). */
  public Route page() {
    return page;
  }

  /** {@code GET /ops/data}: to be placed behind the gateway token. */
  public Route data() {
    return data;
  }

  private static byte[] toBytes(Object json) {
    try {
      return JSON.writeValueAsBytes(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static byte[] readPage() {
    try (InputStream in = OpsRoutes.class.getResourceAsStream(PAGE_RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "the operations page " + PAGE_RESOURCE + " is missing from the jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
