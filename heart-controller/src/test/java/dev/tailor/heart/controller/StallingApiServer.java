package dev.tailor.heart.controller;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

/**
 * The fabric8 mock API server in CRUD mode, except that requests chosen by a test are never
 * answered (their answer is held back for an hour, longer than any test), as an API server that
 * stalls some calls does: the client waits for headers that do not come, while every other call
 * is answered at once.
 */
final class StallingApiServer implements AutoCloseable {

    /** Requests with {@code method} whose path (query included) matches {@code path}. */
    record Stall(String method, Pattern path, AtomicInteger arrived) {

        /** How many such requests have arrived (and hang) so far. */
        int count() {
            return arrived.get();
        }
    }

    private final KubernetesMockServer server;
    private final List<Stall> stalls = new CopyOnWriteArrayList<>();
    /** A client of the server whose calls time out after {@code requestTimeoutMillis}. */
    final KubernetesClient client;

    StallingApiServer(int requestTimeoutMillis) {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        Dispatcher crud = new KubernetesMixedDispatcher(responses);
        Dispatcher dispatcher = new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest request) {
                for (Stall stall : stalls) {
                    if (stall.method().equalsIgnoreCase(request.getMethod())
                            && stall.path().matcher(request.getPath()).matches()) {
                        stall.arrived().incrementAndGet();
                        return new MockResponse().setResponseCode(504).setBody("{}").setBodyDelay(1, TimeUnit.HOURS);
                    }
                }
                return crud.dispatch(request);
            }

            @Override
            public void shutdown() {
                crud.shutdown();
            }

            @Override
            public void releaseResources() {
                crud.releaseResources();
            }
        };
        server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
        server.init();
        client = server.createClient(builder -> builder.editOrNewConfig().withRequestTimeout(requestTimeoutMillis)
                .endConfig());
    }

    /** From now on, requests with {@code method} whose path (with its query) matches {@code pathRegex} hang. */
    Stall stall(String method, String pathRegex) {
        Stall stall = new Stall(method, Pattern.compile(pathRegex), new AtomicInteger());
        stalls.add(stall);
        return stall;
    }

    /** Requests matching {@code stall} are answered again (the ones already hanging stay so). */
    void release(Stall stall) {
        stalls.remove(stall);
    }

    /** Its configuration (e.g. to build a second client). */
    Config config() {
        return client.getConfiguration();
    }

    @Override
    public void close() {
        stalls.clear();
        client.close();
        server.destroy();
    }
}
