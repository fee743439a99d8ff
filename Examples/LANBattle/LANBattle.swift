import Dispatch
import Foundation
import OpenGameKit

/// The example game: two players on the same network find each other with the peer picker, swap their
/// Codable creatures as JSON and take turns attacking until one creature faints; with `--voice` they talk meanwhile
/// (`GKVoiceChatService` over the same session).
///
///     swift run LANBattle --name Alice        # in one terminal
///     swift run LANBattle --name Bob          # in another
///     swift run LANBattle --name Bob --auto --interface lo   # no questions asked, on this machine
///     swift run LANBattle --name Alice --voice                # and talk while battling (microphone, speakers)
@main
enum LANBattle {
    static func main() async {
        guard let options = BattleOptions(arguments: Array(CommandLine.arguments.dropFirst())) else {
            FileHandle.standardError.write(Data((BattleOptions.usage + "\n").utf8))
            exit(2)
        }
        if let interface = options.interface { setenv("OPENGAMEKIT_INTERFACE", interface, 1) }
        let session: GKSession
        do {
            session = try GKSession(sessionID: options.sessionID, displayName: options.name, sessionMode: .peer)
        } catch {
            FileHandle.standardError.write(Data("LANBattle: \(error)\n".utf8))
            exit(1)
        }
        session.delegateQueue = DispatchQueue(label: "LANBattle.session")
        var voice: BattleVoice?
        if options.voice {
            do {
                voice = try BattleVoice(session: session, input: options.voiceInput, output: options.voiceOutput, port: options.voicePort)
            } catch {
                FileHandle.standardError.write(Data("LANBattle: voice chat: \(error)\n".utf8))
                exit(1)
            }
        }
        let connector = BattleConnector(session: session, voice: voice)
        session.delegate = connector
        let picker = connector.makePicker(auto: options.auto)

        let timeout = Task {
            try await Task.sleep(for: .milliseconds(Int64(options.timeout * 1000)))
            say("No battle within \(Int(options.timeout)) s; giving up.")
            exit(1)
        }
        say("\(options.name) is looking for an opponent (session \(session.sessionID))…")
        picker.show()
        let code = await play(options: options, session: session, connector: connector, voice: voice)
        timeout.cancel()
        session.disconnectFromAllPeers()
        session.isAvailable = false
        try? await Task.sleep(for: .milliseconds(300))  // let the goodbyes go out
        exit(code)
    }

    static func play(options: BattleOptions, session: GKSession, connector: BattleConnector, voice: BattleVoice?) async -> Int32 {
        let mine = Creature.forPlayer(options.name)
        var opponentID: String?
        var battle: Battle?
        var printed = 0
        func showLog() {
            guard let current = battle else { return }
            for line in current.log.dropFirst(printed) { say(line) }
            printed = current.log.count
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func send(_ message: BattleMessage) -> Bool {
            guard let opponentID, let data = try? encoder.encode(message) else { return false }
            do {
                try session.send(data, toPeers: [opponentID], with: .reliable)
                return true
            } catch {
                say("Send failed: \(error)")
                return false
            }
        }
        func attackIfMyTurn() -> Bool {
            guard var current = battle, current.winner == nil, current.attackerID == session.peerID else { return true }
            let attack = current.nextAttack()
            guard send(attack), current.apply(attack) else { return false }
            battle = current
            showLog()
            return true
        }

        /// With voice and the autopilot, a turn a second, so that there is a battle to talk over.
        func pace() async {
            if voice != nil && options.auto { try? await Task.sleep(for: .seconds(1)) }
        }

        /// Handles one message from the opponent; returns an exit code once the game is over.
        func handle(_ data: Data, from opponentID: String) async -> Int32? {
            guard let message = try? JSONDecoder().decode(BattleMessage.self, from: data) else {
                say("Ignoring a message that is not a battle message.")
                return nil
            }
            switch message {
            case .creature(let theirs) where battle == nil:
                say("The opponent sends out \(theirs.name): HP \(theirs.hp), ATK \(theirs.attack), DEF \(theirs.defense), SPD \(theirs.speed).")
                let opponentName = session.displayName(forPeer: opponentID) ?? opponentID
                battle = Battle(
                    Battle.Side(peerID: session.peerID, player: options.name, creature: mine, hp: mine.hp),
                    Battle.Side(peerID: opponentID, player: opponentName, creature: theirs, hp: theirs.hp)
                )
                showLog()
                await pace()
                guard attackIfMyTurn() else { return 1 }
            case .attack where battle != nil:
                guard var current = battle, current.apply(message) else {
                    say("The opponent's attack does not follow the rules; stopping.")
                    return 1
                }
                battle = current
                showLog()
                await pace()
                guard attackIfMyTurn() else { return 1 }
            default:
                say("Unexpected message; ignoring it.")
            }
            if let current = battle, current.winner != nil {
                // Give the last attack time to reach the opponent before leaving.
                try? await Task.sleep(for: .milliseconds(500))
                if let voice { await talk(voice, with: opponentID, options: options) }
                return 0
            }
            return nil
        }

        // Messages can arrive before the picker reports the connection; they wait here.
        var early: [(data: Data, peer: String)] = []
        for await event in connector.events {
            switch event {
            case .cancelled:
                say("Cancelled.")
                return 1
            case .connected(let peer):
                opponentID = peer
                session.isAvailable = false
                say("Battle against \(session.displayName(forPeer: peer) ?? peer)! Sending \(mine.name).")
                // One side calls: the one with the smaller peer id.
                if let voice, session.peerID < peer { voice.call(peer) }
                guard send(.creature(mine)) else { return 1 }
                for message in early where message.peer == peer {
                    if let code = await handle(message.data, from: peer) { return code }
                }
                early = []
            case .disconnected(let peer) where peer == opponentID:
                if battle?.winner != nil { return 0 }
                say("The opponent left.")
                return 1
            case .disconnected:
                continue
            case .message(let data, let peer):
                guard let opponentID else {
                    early.append((data, peer))
                    continue
                }
                guard peer == opponentID else { continue }
                if let code = await handle(data, from: opponentID) { return code }
            }
        }
        return 1
    }

    /// After the battle the players go on talking: until the WAV input has been said (and 2 s more to hear the
    /// answer), or for `--talk` seconds; a side that hangs up first ends it for both.
    static func talk(_ voice: BattleVoice, with opponentID: String, options: BattleOptions) async {
        let start = ContinuousClock.now
        var saidAt: ContinuousClock.Instant?
        while !voice.ended {
            let now = ContinuousClock.now
            if options.voiceInput != nil {
                if saidAt == nil && voice.inputEnded { saidAt = now }
                if let saidAt, now - saidAt > .seconds(2) { break }
            } else if now - start > .milliseconds(Int64(options.talkSeconds * 1000)) {
                break
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        voice.hangUp(opponentID)
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
