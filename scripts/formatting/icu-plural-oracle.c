// Asks this toolchain's ICU (lib_FoundationICU, symbols prefixed `swift_`) for the CLDR plural category of
// numbers as displayed; used to produce and re-check the tables in PluralRulesTests.swift.
// Not part of the package build: it links a private toolchain library.
//
//     gcc Tools/icu-plural-oracle.c -o /tmp/oracle -L/opt/swift/usr/lib/swift/linux -l_FoundationICU \
//         -Wl,-rpath,/opt/swift/usr/lib/swift/linux
//     /tmp/oracle version                      # prints the ICU version
//     printf 'fr 1.5\npt_PT 0\n' | /tmp/oracle  # prints "locale number category" per line
//
// Comparing every available locale with the hand-coded rules:
//
//     SCORE_FORMATTING_PLURAL_DUMP=/tmp/mine.txt swift test --filter dumpForICU
//     cut -d' ' -f1,2 /tmp/mine.txt | /tmp/oracle > /tmp/icu.txt
//     paste -d' ' /tmp/mine.txt /tmp/icu.txt | awk '$3 != $6 {print $1}' | sort -u   # locales that differ
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint16_t UChar;
typedef int UErrorCode;
typedef void *Handle;
extern void swift_u_getVersion(uint8_t version[4]);
extern Handle swift_uplrules_open(const char *locale, UErrorCode *status);
extern int swift_uplrules_selectFormatted(Handle rules, Handle number, UChar *keyword, int capacity, UErrorCode *status);
extern void swift_uplrules_close(Handle rules);
extern Handle swift_unumf_openForSkeletonAndLocale(const UChar *skeleton, int length, const char *locale, UErrorCode *status);
extern Handle swift_unumf_openResult(UErrorCode *status);
extern void swift_unumf_formatDecimal(Handle formatter, const char *number, int length, Handle result, UErrorCode *status);
extern void swift_unumf_closeResult(Handle result);
extern void swift_unumf_close(Handle formatter);

int main(int argc, char **argv) {
    if (argc > 1) {
        uint8_t version[4];
        swift_u_getVersion(version);
        printf("ICU %d.%d.%d\n", version[0], version[1], version[2]);
        return 0;
    }
    char locale[64], number[64];
    while (scanf("%63s %63s", locale, number) == 2) {
        UErrorCode status = 0;
        // Format with exactly the visible fraction digits so that v, f and t reach the rule as displayed.
        const char *dot = strchr(number, '.');
        int fractionDigits = dot ? (int)strlen(dot + 1) : 0;
        char skeleton[32];
        if (fractionDigits == 0) {
            strcpy(skeleton, "precision-integer");
        } else {
            strcpy(skeleton, ".");
            for (int i = 0; i < fractionDigits && i < 20; i++) strcat(skeleton, "0");
        }
        UChar wideSkeleton[32];
        int length = (int)strlen(skeleton);
        for (int i = 0; i <= length; i++) wideSkeleton[i] = (UChar)skeleton[i];
        Handle rules = swift_uplrules_open(locale, &status);
        Handle formatter = swift_unumf_openForSkeletonAndLocale(wideSkeleton, length, locale, &status);
        Handle result = swift_unumf_openResult(&status);
        swift_unumf_formatDecimal(formatter, number, (int)strlen(number), result, &status);
        UChar keyword[32];
        int keywordLength = swift_uplrules_selectFormatted(rules, result, keyword, 32, &status);
        char ascii[32];
        for (int i = 0; i < keywordLength && i < 31; i++) ascii[i] = (char)keyword[i];
        ascii[keywordLength < 31 ? keywordLength : 31] = 0;
        if (status > 0) printf("%s %s ERROR%d\n", locale, number, status);
        else printf("%s %s %s\n", locale, number, ascii);
        swift_unumf_closeResult(result);
        swift_unumf_close(formatter);
        swift_uplrules_close(rules);
    }
    return 0;
}
