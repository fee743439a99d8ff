// swift-tools-version:6.2
import PackageDescription

import class Foundation.ProcessInfo

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Our code builds without warnings, and stays so (dependencies are not affected).
    .treatAllWarnings(as: .error),
]

/// The packages only the server and its tools use (web framework, database drivers, metrics, command line) are linked
/// with the trait "Server", on by default: this repository's own builds have it. A game that depends on OpenGameKit
/// with `traits: []` neither resolves nor fetches them; without the trait only the SDK's libraries build.
let server = TargetDependencyCondition.when(traits: ["Server"])

let package = Package(
    name: "OpenGameKit",
    // macOS 15 for Synchronization's Mutex and Atomic. Not iOS, tvOS, watchOS or visionOS (their minimums would be
    // 18, 18, 11 and 2): the SDK uses Foundation's `Process` (opening the Game Center app in the browser) and
    // `homeDirectoryForCurrentUser` (the device folder), which they do not have.
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenGameKit", targets: ["OpenGameKit"]),
        .library(name: "OpenGameKitVoice", targets: ["OpenGameKitVoice"]),
        .executable(name: "gamecenter", targets: ["gamecenter"]),
    ],
    traits: [
        .trait(name: "Server", description: "The gamecenter server and its tools, with the packages only they link."),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // `swift package generate-documentation` (scripts/docs.sh); a command plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "CRelayAEAD"),
        .target(name: "CUDPBatch"),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        .systemLibrary(name: "CPulseSimple", pkgConfig: "libpulse-simple", providers: [.apt(["libpulse-dev"])]),
        .target(name: "JMESPath", swiftSettings: swiftSettings),
        .target(
            name: "GameCenterProtocol",
            dependencies: [
                "JMESPath",
                "CRelayAEAD",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GameCenterStorage",
            dependencies: [
                "GameCenterProtocol",
                .product(name: "SQLKit", package: "sql-kit", condition: server),
                .product(name: "SQLiteKit", package: "sqlite-kit", condition: server),
                .product(name: "PostgresKit", package: "postgres-kit", condition: server),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "GameCenterServer",
            dependencies: [
                "JMESPath",
                "CUDPBatch",
                "GameCenterProtocol",
                "GameCenterStorage",
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: server),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: server),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth", condition: server),
                .product(name: "Mustache", package: "swift-mustache", condition: server),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates", condition: server),
                .product(name: "SwiftASN1", package: "swift-asn1", condition: server),
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Yams", package: "Yams", condition: server),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: server),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: server),
                .product(name: "Prometheus", package: "swift-prometheus", condition: server),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OpenGameKit",
            dependencies: [
                "GameCenterProtocol",
                "JMESPath",
                "OpenGameKitLAN",
                "OpenGameKitSessionWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        // The LAN session's wire format (frames, records, datagram headers) on its own, so that its fuzzer builds
        // without the SDK's HTTP, TLS and WebSocket packages.
        .target(
            name: "OpenGameKitSessionWire",
            dependencies: ["GameCenterProtocol", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OpenGameKitLAN",
            dependencies: [
                "GameCenterProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "OpenGameKitVoice",
            dependencies: [
                "OpenGameKit",
                "GameCenterProtocol",
                "COpus",
                "CSpeexDSP",
                "CPulseSimple",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gamecenter",
            dependencies: [
                "GameCenterServer",
                "GameCenterProtocol",
                "JMESPath",
                "GameCenterStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "gamecenter-bench",
            dependencies: [
                "GameCenterServer",
                "GameCenterStorage",
                "GameCenterProtocol",
                "JMESPath",
                "OpenGameKit",
                "OpenGameKitLAN",
                "OpenGameKitVoice",
                "NetworkFaultProxy",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket", condition: server),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: server),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
                .product(name: "Histogram", package: "hdrhistogram-swift", condition: server),
            ],
            path: "Benchmarks/gamecenter-bench",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "FirstGame",
            dependencies: ["OpenGameKit"],
            path: "Examples/FirstGame",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TicTacToe",
            dependencies: ["OpenGameKit"],
            path: "Examples/TicTacToe",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "VoiceChat",
            dependencies: ["OpenGameKit", "OpenGameKitVoice"],
            path: "Examples/VoiceChat",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LANBattle",
            dependencies: ["OpenGameKit", "OpenGameKitVoice"],
            path: "Examples/LANBattle",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "MatchProbe",
            dependencies: ["OpenGameKit"],
            path: "Tests/MatchProbe",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "LANSessionProbe",
            dependencies: ["OpenGameKit"],
            path: "Tests/LANSessionProbe",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VoiceTestSupport",
            dependencies: ["OpenGameKitVoice"],
            path: "Tests/VoiceTestSupport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LANTestSupport",
            dependencies: ["OpenGameKitLAN"],
            path: "Tests/LANTestSupport",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "NetworkFaultProxy",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Tests/NetworkFaultProxy",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NetworkFaultProxyTests",
            dependencies: ["NetworkFaultProxy", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "JMESPathTests", dependencies: ["JMESPath"], resources: [.copy("Compliance")], swiftSettings: swiftSettings),
        .testTarget(
            name: "GameCenterProtocolTests",
            dependencies: [
                "GameCenterProtocol",
                "NetworkFaultProxy",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GameCenterStorageTests",
            dependencies: ["GameCenterStorage"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GameCenterServerTests",
            dependencies: [
                "GameCenterServer",
                "JMESPath",
                "NetworkFaultProxy",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth", condition: server),
                .product(name: "SQLKit", package: "sql-kit", condition: server),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenGameKitLANTests",
            dependencies: ["OpenGameKitLAN", "LANTestSupport", "NetworkFaultProxy"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenGameKitSessionTests",
            dependencies: [
                "OpenGameKit", "OpenGameKitLAN", "OpenGameKitSessionWire", "GameCenterProtocol", "LANTestSupport", "NetworkFaultProxy",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "OpenGameKitVoiceTests",
            dependencies: [
                "OpenGameKitVoice", "VoiceTestSupport", "NetworkFaultProxy", "LANTestSupport", "GameCenterProtocol",
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The SDK's own unit tests: no server, no voice.
        .testTarget(
            name: "OpenGameKitTests",
            dependencies: [
                "OpenGameKit",
                "GameCenterProtocol",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Whole-system tests: the real `gamecenter` binary driven by SDK devices (and voice engines, browsers' pages).
        .testTarget(
            name: "SystemTests",
            dependencies: [
                "JMESPath",
                "OpenGameKit",
                "OpenGameKitVoice",
                "VoiceTestSupport",
                "LANTestSupport",
                "GameCenterProtocol",
                "NetworkFaultProxy",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket", condition: server),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)

// The micro-benchmarks in Benchmarks/ (ordo-one/benchmark: wall clock, allocation counts, thresholds) are part
// of the package only when OPENGAMEKIT_BENCHMARKS is set, so games that depend on OpenGameKit, the serving binary
// and the test build never fetch or build the harness:
//     OPENGAMEKIT_BENCHMARKS=1 swift package benchmark
if ProcessInfo.processInfo.environment["OPENGAMEKIT_BENCHMARKS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]))
    let harness: [Target.Dependency] = [.product(name: "Benchmark", package: "benchmark")]
    package.targets += [
        .executableTarget(
            name: "ServerBenchmarks",
            dependencies: harness + ["GameCenterServer"],
            path: "Benchmarks/ServerBenchmarks",
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "CodecBenchmarks",
            dependencies: harness + [
                "GameCenterProtocol", "OpenGameKitLAN",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/CodecBenchmarks",
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
}

// MARK: - Fuzzers (only with OPENGAMEKIT_FUZZ set)

// The coverage-guided fuzzers of the wire decoders: Fuzz/<Name>/main.swift, its seed corpus in Fuzz/<Name>/corpus/
// (and a libFuzzer dictionary, fuzz.dict, where the decoder's words are text). Each runs libFuzzer through FuzzerMain and
// needs the toolchain's `-sanitize=fuzzer` to link, so only `scripts/fuzz.sh` builds them: an ordinary `swift build`
// never sees them, and no product carries their code.
if ProcessInfo.processInfo.environment["OPENGAMEKIT_FUZZ"] != nil {
    let fuzzers: [(name: String, dependencies: [Target.Dependency], exclude: [String])] = [
        ("FuzzRealtimeFrame", ["GameCenterProtocol"], ["corpus", "fuzz.dict"]),
        ("FuzzRelayFrame", ["GameCenterProtocol", .product(name: "NIOCore", package: "swift-nio")], ["corpus"]),
        ("FuzzRelayDatagram", ["GameCenterProtocol", .product(name: "NIOCore", package: "swift-nio")], ["corpus"]),
        ("FuzzSessionFrame", ["OpenGameKitSessionWire", "GameCenterProtocol", .product(name: "NIOCore", package: "swift-nio")], ["corpus"]),
        ("FuzzDNSMessage", ["OpenGameKitLAN"], ["corpus"]),
    ]
    package.targets.append(.target(name: "FuzzerMain", path: "Fuzz/FuzzerMain"))
    for fuzzer in fuzzers {
        package.targets.append(
            .executableTarget(
                name: fuzzer.name, dependencies: ["FuzzerMain"] + fuzzer.dependencies, path: "Fuzz/\(fuzzer.name)", exclude: fuzzer.exclude,
                swiftSettings: swiftSettings)
        )
        package.products.append(.executable(name: fuzzer.name, targets: [fuzzer.name]))
    }
}
