// Embedded Neo4j Community DBMS that serves Bolt on 127.0.0.1 for local tests.
// Usage: java -cp 'lib/*:classes' RaglineNeo4j <home-dir> <bolt-port> <ready-file>
// Auth is disabled: the driver may send any user/password. There is no HTTP server.
// Once Bolt listens and a real query works, <ready-file> is written (deploy/local/neo4j.sh waits on it).
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

public final class RaglineNeo4j {
    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]);
        int port = Integer.parseInt(args[1]);
        Path ready = Path.of(args[2]);
        Files.deleteIfExists(ready);
        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                // no server-side routing listener (it would take port 7688) and no usage reporting
                .setConfig(GraphDatabaseSettings.routing_enabled, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, 256L * 1024 * 1024)
                // Bolt's graceful shutdown waits ~15 s by default; a test server need not
                .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofSeconds(1))
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(ready);
            } catch (Exception ignored) {
                // best effort
            }
            dbms.shutdown();
        }));
        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        Object one = db.executeTransactionally("RETURN 1 AS one", java.util.Map.of(),
                r -> r.next().get("one"));
        Files.writeString(ready, "bolt://127.0.0.1:" + port + "\n");
        System.out.println("ragline-neo4j ready on bolt://127.0.0.1:" + port + " (RETURN 1 -> " + one + ")");
        Thread.currentThread().join();
    }
}
