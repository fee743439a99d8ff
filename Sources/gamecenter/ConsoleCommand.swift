import ArgumentParser
import Foundation
import GameCenterServer
import GameCenterStorage
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `gamecenter console`: the studio console's users, written straight to the database (a console user can exist
/// before anyone can sign in to make one). Every change is written to the audit log with the actor `cli`.
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "Add, list and remove the studio console's users (the console is served at /console).",
        subcommands: [AddUser.self, ListUsers.self, RemoveUser.self])

    /// The database option every subcommand takes.
    struct Store: ParsableArguments {
        @OptionGroup var storage: DatabaseOption

        /// Runs `body` with the console's users on the migrated database (storage logs warnings only: the command's
        /// output is its answer); a refusal exits 1 with its message.
        func withUsers(_ body: @escaping @Sendable (ConsoleUsers) async throws -> Void) async throws {
            var logger = Logger(label: "gamecenter.storage")
            logger.logLevel = .warning
            do {
                try await Database.withDatabase(url: storage.database, logger: logger) { try await body(ConsoleUsers(database: $0)) }
            } catch let error as APIError {
                FileHandle.standardError.write(Data("gamecenter: \(error.message)\n".utf8))
                throw ExitCode.failure
            } catch let error as StorageError {
                FileHandle.standardError.write(Data("gamecenter: cannot open the database: \(error)\n".utf8))
                throw ExitCode(error.isInUse ? 75 : 1)
            }
        }
    }

    struct AddUser: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-user", abstract: "Add a console user; the password is read from standard input or prompted for.")
        @OptionGroup var store: Store
        @Option(help: "The user's sign-in name: 1 to 64 letters, digits, '.', '_' or '-'.") var name: String
        @Option(help: ArgumentHelp("What the user may do: \(ConsoleRole.names).", valueName: "role")) var role: ConsoleRole
        @Flag(name: .customLong("password-stdin"), help: "Read the password (10 to 128 characters) from the first line of standard input.")
        var passwordStdin = false

        func run() async throws {
            let password = try passwordStdin ? readLine(strippingNewline: true) ?? "" : Self.prompt()
            let (name, role) = (name, role)
            try await store.withUsers { try await $0.add(name: name, role: role, password: password, actor: "cli") }
            print("added console user \(name) (\(role.rawValue))")
        }

        /// Asks for the password twice on the terminal, without echoing it.
        private static func prompt() throws -> String {
            guard isatty(STDIN_FILENO) != 0 else { throw ValidationError("standard input is not a terminal: give the password with --password-stdin") }
            let first = readHidden("Password: "), second = readHidden("Password again: ")
            guard first == second else { throw ValidationError("the two passwords differ") }
            return first
        }

        private static func readHidden(_ prompt: String) -> String {
            FileHandle.standardError.write(Data(prompt.utf8))
            var saved = termios()
            tcgetattr(STDIN_FILENO, &saved)
            var hidden = saved
            hidden.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &hidden)
            defer {
                tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                FileHandle.standardError.write(Data("\n".utf8))
            }
            return readLine(strippingNewline: true) ?? ""
        }
    }

    struct ListUsers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-users", abstract: "List the console users: name, role, added.")
        @OptionGroup var store: Store

        func run() async throws {
            try await store.withUsers { users in
                let list = try await users.list()
                for user in list { print("\(user.name)\t\(user.role.rawValue)\t\(ISO8601DateFormatter().string(from: user.createdAt))") }
                if list.isEmpty { print("no console users") }
            }
        }
    }

    struct RemoveUser: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-user", abstract: "Remove a console user; their console sessions end at once.")
        @OptionGroup var store: Store
        @Option(help: "The user's name.") var name: String

        func run() async throws {
            let name = name
            try await store.withUsers { try await $0.remove(name: name, actor: "cli") }
            print("removed console user \(name)")
        }
    }
}

extension ConsoleRole: ExpressibleByArgument {}
