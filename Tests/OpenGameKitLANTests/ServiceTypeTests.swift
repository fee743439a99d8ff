import Testing
import OpenGameKitLAN

@Suite("ServiceType")
struct ServiceTypeTests {
    @Test(arguments: ["a", "mygame", "Space-Race", "x1", "1x", "a-b-c", "abcdefghijklmno", "0-a"])
    func acceptsValidSessionIDs(_ id: String) throws {
        let type = try ServiceType(sessionID: id)
        #expect(type.description == "_\(id)._tcp.local.")
        #expect(type.domainName.labels == ["_\(id)", "_tcp", "local"])
    }

    @Test(arguments: [
        ("", ServiceTypeError.empty),
        ("abcdefghijklmnop", .tooLong("abcdefghijklmnop")),
        ("my_game", .invalidCharacter("my_game", "_")),
        ("my game", .invalidCharacter("my game", " ")),
        ("jeu-é", .invalidCharacter("jeu-é", "é")),
        ("_tcp", .invalidCharacter("_tcp", "_")),
        ("1234", .noLetter("1234")),
        ("-", .noLetter("-")),
        ("-game", .hyphenAtEnd("-game")),
        ("game-", .hyphenAtEnd("game-")),
        ("my--game", .consecutiveHyphens("my--game")),
    ])
    func rejectsInvalidSessionIDs(_ id: String, _ expected: ServiceTypeError) {
        #expect(throws: expected) { try ServiceType(sessionID: id) }
        #expect(expected.description.contains("1–15 characters"))
    }

    @Test(arguments: [
        ("com.example.SpaceRace", "spacerace"),
        ("com.example.Space-Race", "space-race"),
        ("com.example.Space_Race!", "spacerace"),
        ("com.example.--Tank--Wars--", "tank-wars"),
        ("com.example.a---b", "a-b"),
        ("org.x.SuperLongGameNameThatGoesOn", "superlongg"),
        ("org.x.abcdefghi-jklmn", "abcdefghi"),
        ("SingleComponent", "singlecomp"),
        ("com.example.Ünïcödé", "ncd"),
    ])
    func derivesFromBundleID(_ bundleID: String, _ readable: String) throws {
        let type = ServiceType.derived(fromBundleID: bundleID)
        let hex = String(ServiceType.fnv1a32(bundleID), radix: 16)
        #expect(type.name == readable + "-" + (String(repeating: "0", count: 8 - hex.count) + hex).prefix(4))
        try ServiceType.validate(type.name)
    }

    /// The whole bundle id counts: two games whose ids end alike do not share a session id.
    @Test func bundleIDsThatEndAlikeGetDifferentTypes() {
        let a = ServiceType.derived(fromBundleID: "com.alpha.tapper"), b = ServiceType.derived(fromBundleID: "com.beta.tapper")
        #expect(a != b)
        #expect(a.name.hasPrefix("tapper-") && b.name.hasPrefix("tapper-"))
    }

    @Test(arguments: ["com.example.1234", "com.example.", "", "com.example.___", "com.example.日本語"])
    func fallsBackToStableHash(_ bundleID: String) throws {
        let type = ServiceType.derived(fromBundleID: bundleID)
        let hash = ServiceType.fnv1a32(bundleID)
        let hex = String(hash, radix: 16)
        #expect(type.name == "gk-" + String(repeating: "0", count: 8 - hex.count) + hex)
        #expect(type.name.count == 11)
        try ServiceType.validate(type.name)
        #expect(ServiceType.derived(fromBundleID: bundleID) == type)
    }

    @Test func fnv1aKnownVectors() {
        #expect(ServiceType.fnv1a32("") == 0x811C_9DC5)
        #expect(ServiceType.fnv1a32("a") == 0xE40C_292C)
        #expect(ServiceType.fnv1a32("foobar") == 0xBF9C_F968)
    }
}
